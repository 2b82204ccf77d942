package memory

// Valid reports whether l is [LayerL1] or [LayerL2].
func (l Layer) Valid() bool { return l == LayerL1 || l == LayerL2 }
