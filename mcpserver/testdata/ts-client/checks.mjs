// The scripts' shared report: one line per check, then a closing
// "LABEL: N passed, M failed" line; the process exits 1 if any check failed.
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
