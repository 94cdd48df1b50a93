package config

import "fmt"

// ParamError is an invalid parameter: Field is its wire name ("cwd"),
// Message what is wrong with it. rpc maps it to invalidParams.
type ParamError struct {
	Field   string
	Message string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("config: invalid %s: %s", e.Field, e.Message)
}
