// The scripts' shared report: one line per check, then a closing
// "LABEL: N passed, M failed" line; the process exits 1 if any check failed.
// And startHTTP, which runs a server binary on a loopback port.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

let passed = 0;
let failed = 0;

export function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${detail}`);
  }
}

export function finish(label) {
  console.log(`${label}: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

// startHTTP runs server with -http on a loopback port and returns its URL,
// its stderr so far (log()) and the process, once it prints "listening URL".
export async function startHTTP(server) {
  const proc = spawn(server, ["-http", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  proc.stderr.on("data", (b) => (log += b));
  const lines = createInterface({ input: proc.stdout });
  try {
    const [first] = await Promise.race([
      once(lines, "line"),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no address from the server: ${log}`)), 10000)),
    ]);
    return { url: first.replace(/^listening /, ""), log: () => log, proc };
  } catch (e) {
    proc.kill();
    throw e;
  }
}
