package example

// PutIncident stores inc under id for a test and returns a func that restores the
// store, so tests can make the handler return records that break the output
// contract.
func PutIncident(id IncidentID, inc Incident) (restore func()) {
	store.mu.Lock()
	defer store.mu.Unlock()
	old, had := store.byID[id]
	store.byID[id] = inc
	return func() {
		store.mu.Lock()
		defer store.mu.Unlock()
		if had {
			store.byID[id] = old
		} else {
			delete(store.byID, id)
		}
	}
}
