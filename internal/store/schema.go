package store

import "fmt"

// ReadableSchema says whether this faultline, whose schema is latest, can
// read a database at schema current as it is: reading never migrates, so an
// older database waits for a command that writes, and a newer one for a
// newer faultline.
func ReadableSchema(current, latest int) error {
	switch {
	case current < latest:
		return fmt.Errorf("the database is of an older faultline (schema %d; this one reads %d): run a command that writes, such as faultline ingest, once to upgrade it", current, latest)
	case current > latest:
		return NewerSchema(current, latest)
	}
	return nil
}

// NewerSchema is the refusal of a database at schema current, written by a
// newer faultline than this one, whose schema is latest.
func NewerSchema(current, latest int) error {
	return fmt.Errorf("database schema version %d is newer than this faultline understands (%d); upgrade faultline", current, latest)
}
