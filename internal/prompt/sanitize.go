package prompt

import "reflect"

// sanitize returns a copy of v with Defuse applied to every string it
// holds (fields, slices, nested structs), so no template can forget it.
func sanitize(v any) any {
	rv := reflect.ValueOf(v)
	out := reflect.New(rv.Type()).Elem()
	copyDefused(out, rv)
	return out.Interface()
}

func copyDefused(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.String:
		dst.SetString(Defuse(src.String()))
	case reflect.Struct:
		for i := 0; i < src.NumField(); i++ {
			if dst.Field(i).CanSet() {
				copyDefused(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			copyDefused(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	default:
		dst.Set(src)
	}
}
