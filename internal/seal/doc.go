// Package seal encrypts the secrets Tradekit must be able to read back
// (broker OAuth tokens, webhook signing secrets) under the server's
// secret key, so that the database never holds them in plaintext.
//
//	s, err := seal.New(key) // 32 bytes: TRADEKIT_SECRET_KEY
//	if err != nil {
//		return err
//	}
//	sealed := s.Seal(token, "access:"+id) // "v1.…", bound to its context
//	token, err = s.Open(sealed, "access:"+id)
//
// A sealed value starts with a version prefix ([IsSealed]), so that a
// column may hold values written before sealing and be sealed on read.
package seal
