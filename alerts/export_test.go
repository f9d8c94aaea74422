package alerts

// TailsKept returns how many conditions' tails s keeps between passes.
func (s *Service) TailsKept() int {
	n := 0
	s.tails.Range(func(any, any) bool { n++; return true })
	return n
}
