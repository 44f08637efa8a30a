package sourceproto

import "fmt"

func sprint(v any) string   { return fmt.Sprintf("%v %+v", v, v) }
func sprintGo(v any) string { return fmt.Sprintf("%#v", v) }
