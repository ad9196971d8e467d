package rl

import "strings"

// SettingInfo is one setting of rl's settings table (rl_setting_describe):
// what Config's fields and Settings entries are checked against.
type SettingInfo struct {
	Name  string
	Scope string // "store" (URL query) or "limiter" (Config)
	// Kind is what the value is: "text", "count" (RangeMin to RangeMax),
	// "duration", "choice" (one of Choices), "boolean", "rates", "counts",
	// "decimal", "fraction" or "path".
	Kind               string
	Choices            []string
	Default            string // "" with HasDefault false: none
	HasDefault         bool
	Description        string
	RangeMin, RangeMax int64
	Secret             bool // a credential: never shown
}

// SettingInfos lists every setting rl knows, in its table's order.
func SettingInfos() []SettingInfo {
	var out []SettingInfo
	for i := 0; ; i++ {
		d, ok := rlSettingDescribe(i)
		if !ok {
			return out
		}
		s := SettingInfo{
			Name:        d.name,
			Scope:       d.scope,
			Kind:        d.kind,
			Default:     d.defaultValue,
			HasDefault:  d.hasDefault,
			Description: d.description,
			RangeMin:    d.rangeMin,
			RangeMax:    d.rangeMax,
			Secret:      d.secret,
		}
		if d.hasChoices {
			s.Choices = strings.Split(d.choices, ",")
		}
		out = append(out, s)
	}
}
