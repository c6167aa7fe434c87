package collectives

// DestroyGlobalComm tears down the global comm of (dev, ctx): every comm node
// of its pools is freed whatever its refcount (their comms freed, barriers
// left), the semaphore buffer unmapped, the C memory released and the slot
// emptied, so a later InitGlobalComm starts afresh. Nothing registered is not
// an error.
func (r *Runtime) DestroyGlobalComm(dev, ctx int) error {
	if err := checkDevCtx(dev, ctx); err != nil {
		return err
	}
	r.destroy(dev, ctx)
	return nil
}

func (r *Runtime) destroy(dev, ctx int) {
	r.initMtx[dev].Lock()
	defer r.initMtx[dev].Unlock()
	r.setupMtx[dev].Lock()
	defer r.setupMtx[dev].Unlock()
	g := r.slots[dev][ctx].Load()
	if g == nil {
		return
	}
	r.poolMtx[dev].Lock()
	for stream := range r.pools[dev][ctx] {
		for _, n := range r.pools[dev][ctx][stream] {
			r.freeNodeLocked(n)
		}
		r.pools[dev][ctx][stream] = nil
	}
	r.poolMtx[dev].Unlock()
	g.mu.Lock()
	g.node, g.boot = nil, nil
	g.mu.Unlock()
	r.slots[dev][ctx].Store(nil)
	r.locals.set(ctx, g.m.GetGDeviceID(), false)
	g.release()
}
