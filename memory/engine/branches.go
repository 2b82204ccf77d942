package engine

// BranchChanged forgets what the engine keeps of a session's L1 window (its candidates and its
// last explanation) after the session's current branch moved ([memory.Branches.SetHead]): the
// next turn loads the window of the new branch from the store.
func (m *Engine) BranchChanged(session string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessWins, session)
	delete(m.windows, session)
}
