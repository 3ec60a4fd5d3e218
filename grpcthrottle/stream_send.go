package grpcthrottle

// SendMsg sends a message; with WithTokenPerMessage it first waits for a
// token for it, held until gRPC has the message, and given back if SendMsg
// fails (the message was not sent). A wait that fails (the stream's
// context ended, the limiter failed) returns its status error and sends
// nothing; cancel the stream then.
func (s *clientStream) SendMsg(m any) error {
	if !s.i.cfg.perMessage {
		return s.sendMsg(m)
	}
	tok, err := s.i.acquire(s.ctx, s.method)
	if err != nil {
		return err
	}
	s.i.sent.Add(1)
	if err := s.sendMsg(m); err != nil {
		tok.Cancel()
		s.i.unwritten.Add(1)
		return err
	}
	tok.Release()
	return nil
}

// sendMsg is the underlying SendMsg, inside the stream (enter) for one
// that may be kept open.
func (s *clientStream) sendMsg(m any) error {
	if s.cancel != nil {
		if !s.enter() {
			return s.callerErr()
		}
		defer s.leave()
	}
	return s.ownErr(s.ClientStream.SendMsg(m))
}
