package rl

// #include "shim.h"
import "C"

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
		var info C.rl_setting_info
		C.rl_setting_info_init(&info, C.RL_SETTING_INFO_VERSION, nil) // RL_SETTING_INFO_INIT
		var cerr *C.rl_error
		if C.rl_setting_describe(C.size_t(i), &info, &cerr) != C.RL_OK {
			C.rl_error_free(cerr) // past the last setting
			return out
		}
		s := SettingInfo{
			Name:        C.GoString(info.name),
			Scope:       C.GoString(info.scope),
			Kind:        C.GoString(info.kind),
			Description: C.GoString(info.description),
			RangeMin:    int64(info.range_min),
			RangeMax:    int64(info.range_max),
			Secret:      info.secret != 0,
		}
		if info.choices != nil {
			s.Choices = strings.Split(C.GoString(info.choices), ",")
		}
		if info.default_value != nil {
			s.Default, s.HasDefault = C.GoString(info.default_value), true
		}
		out = append(out, s)
	}
}
