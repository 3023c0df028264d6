package function

// DesiredStatus decodes status.<key> of the desired XR, as earlier steps
// of this pipeline run set it, into out. It reports false when no earlier
// step set it.
func (r *Request) DesiredStatus(key string, out any) (bool, error) {
	xr := r.req.GetDesired().GetComposite().GetResource()
	v := valueAt(xr, "status", key)
	if v == nil {
		return false, nil
	}
	return true, jsonRoundTrip(v.AsInterface(), out)
}

// ObservedStatus decodes status.<key> of the observed XR into out. It
// reports false when the XR has none. The status of a namespaced XR is
// the tenant's to write: read it as untrusted.
func (r *Request) ObservedStatus(key string, out any) (bool, error) {
	v := observedCompositeValue(r.req, "status", key)
	if v == nil {
		return false, nil
	}
	return true, jsonRoundTrip(v.AsInterface(), out)
}

// ContextValue decodes the pipeline context's key, which an earlier step
// set (Plan.Context), into out. It reports false when no step set it.
func (r *Request) ContextValue(key string, out any) (bool, error) {
	v, ok := r.req.GetContext().GetFields()[key]
	if !ok {
		return false, nil
	}
	return true, jsonRoundTrip(v.AsInterface(), out)
}
