package marble

import (
	"fmt"
	"reflect"
)

// hasValues reports whether tl holds a value (a symbol to look up).
func hasValues(tl Timeline) bool {
	for _, e := range tl.Events {
		if e.Kind == Next {
			return true
		}
	}
	return false
}

// valuesFor returns values as a map of any, for lookup; for a nil map,
// whether a symbol can stand for itself as a T (letters), or why not.
func valuesFor[T any](values map[string]T) (map[string]any, bool, error) {
	if values != nil {
		m := make(map[string]any, len(values))
		for k, v := range values {
			m[k] = v
		}
		return m, false, nil
	}
	if _, ok := letterValue[T]("a"); ok {
		return nil, true, nil
	}
	name := typeName[T]()
	return nil, false, fmt.Errorf("a nil values map stands for each value symbol as a string, and %s is not a string type: pass a map[string]%s", name, name)
}

// valueOf returns the T symbol stands for: its value in the map, or the
// symbol itself as a T if the map is nil (letters).
func valueOf[T any](marble string, col int, symbol rune, values map[string]any, letters bool) (T, error) {
	var zero T
	if values == nil && letters {
		v, _ := letterValue[T](string(symbol))
		return v, nil
	}
	v, err := lookup(marble, col, symbol, values)
	if err != nil {
		return zero, err
	}
	t, _ := v.(T) // v came from a map[string]T; only a nil interface fails, and its T is the zero value
	return t, nil
}

// letterValue converts a marble symbol to a T: for T string, any or a
// named string type.
func letterValue[T any](symbol string) (T, bool) {
	var zero T
	if v, ok := any(symbol).(T); ok {
		return v, true
	}
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.String {
		return zero, false
	}
	return reflect.ValueOf(symbol).Convert(typ).Interface().(T), true
}

func typeName[T any]() string { return reflect.TypeFor[T]().String() }
