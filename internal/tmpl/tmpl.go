// Package tmpl executes text/template templates without calling methods
// of the data.
//
// text/template looks methods up by name at run time
// (reflect.Value.MethodByName). A binary that can reach such a lookup
// makes Go's linker keep every exported method of every reachable type,
// which kept whole SDKs' worth of dead code in planex's release binary
// (issue #15). This package parses with text/template/parse, so the
// template language and files are unchanged, and evaluates fields, map
// keys, variables and the functions it is given, but never a method: a
// template reads plain data, and anything computed goes in the data or
// through a function.
//
// Supported: text, actions, comments, if/else, with, range (slices,
// arrays, maps in key order, integers), define/template, variables,
// parenthesised pipelines and `|` chains, the builtins and, or, not, len,
// index, eq, ne, lt, le, gt, ge, print, printf and println.
package tmpl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"text/template/parse"
)

// FuncMap names the functions a template may call. A function returns
// one value, or a value and an error.
type FuncMap map[string]any

// Template is a set of named templates (each file's base name and every
// {{define}}).
type Template struct {
	trees map[string]*parse.Tree
	funcs map[string]reflect.Value
}

// ParseFS parses the files of fsys that match the patterns.
func ParseFS(fsys fs.FS, funcs FuncMap, patterns ...string) (*Template, error) {
	t := &Template{trees: map[string]*parse.Tree{}, funcs: map[string]reflect.Value{}}
	names := map[string]any{}
	for name := range builtins {
		names[name] = true // parse checks only that the name is there
	}
	for name, fn := range funcs {
		v := reflect.ValueOf(fn)
		if v.Kind() != reflect.Func {
			return nil, fmt.Errorf("function %s is a %s, not a function", name, v.Kind())
		}
		if n := v.Type().NumOut(); n == 0 || n > 2 || n == 2 && v.Type().Out(1) != errorType {
			return nil, fmt.Errorf("function %s must return a value, or a value and an error", name)
		}
		t.funcs[name] = v
		names[name] = fn
	}
	var files []string
	for _, p := range patterns {
		m, err := fs.Glob(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("matching %s: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no template file matches %s", p)
		}
		files = append(files, m...)
	}
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("reading template: %w", err)
		}
		trees, err := parse.Parse(path.Base(file), string(b), "", "", names)
		if err != nil {
			return nil, fmt.Errorf("parsing template: %w", err)
		}
		for name, tree := range trees {
			t.trees[name] = tree
		}
	}
	return t, nil
}

// Must panics on a parse error: for templates embedded in the binary,
// which tests parse.
func Must(t *Template, err error) *Template {
	if err != nil {
		panic(err)
	}
	return t
}

// Execute writes the template called name, applied to data, to w.
func (t *Template) Execute(w io.Writer, name string, data any) (err error) {
	tree := t.trees[name]
	if tree == nil || tree.Root == nil {
		return fmt.Errorf("template %s is not defined", name)
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(execError)
			if !ok {
				panic(r)
			}
			err = e.err
		}
	}()
	v := reflect.ValueOf(data)
	s := &state{t: t, w: w, tree: tree, vars: []variable{{"$", v}}}
	s.walk(v, tree.Root)
	return nil
}

// execError carries an execution error out of the recursive walk.
type execError struct{ err error }

type variable struct {
	name  string
	value reflect.Value
}

type state struct {
	t    *Template
	w    io.Writer
	tree *parse.Tree
	node parse.Node
	vars []variable
}

func (s *state) errorf(format string, args ...any) {
	where := s.tree.ParseName
	if s.node != nil {
		loc, _ := s.tree.ErrorContext(s.node)
		where = loc
	}
	panic(execError{fmt.Errorf("template %s: %s", where, fmt.Sprintf(format, args...))})
}

func (s *state) walk(dot reflect.Value, node parse.Node) {
	s.node = node
	switch n := node.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			s.walk(dot, c)
		}
	case *parse.TextNode:
		if _, err := s.w.Write(n.Text); err != nil {
			s.errorf("writing: %v", err)
		}
	case *parse.CommentNode:
	case *parse.ActionNode:
		v := s.pipeline(dot, n.Pipe)
		if len(n.Pipe.Decl) == 0 {
			s.print(v)
		}
	case *parse.IfNode:
		s.branch(dot, n.Pipe, n.List, n.ElseList, false)
	case *parse.WithNode:
		s.branch(dot, n.Pipe, n.List, n.ElseList, true)
	case *parse.RangeNode:
		s.rangeOver(dot, n)
	case *parse.TemplateNode:
		tree := s.t.trees[n.Name]
		if tree == nil {
			s.errorf("no such template %q", n.Name)
		}
		var arg reflect.Value
		if n.Pipe != nil {
			arg = s.pipeline(dot, n.Pipe)
		}
		sub := &state{t: s.t, w: s.w, tree: tree, vars: []variable{{"$", arg}}}
		sub.walk(arg, tree.Root)
	default:
		s.errorf("%s is not supported", node)
	}
}

// branch is if (with=false) and with (with=true).
func (s *state) branch(dot reflect.Value, pipe *parse.PipeNode, list, elseList *parse.ListNode, with bool) {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	v := s.pipeline(dot, pipe)
	switch {
	case truth(v) && with:
		s.walk(v, list)
	case truth(v):
		s.walk(dot, list)
	case elseList != nil:
		s.walk(dot, elseList)
	}
}

func (s *state) rangeOver(dot reflect.Value, n *parse.RangeNode) {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	val := indirect(s.pipeline(dot, n.Pipe))
	one := func(key, elem reflect.Value) {
		switch len(n.Pipe.Decl) {
		case 1:
			s.vars[len(s.vars)-1].value = elem
		case 2:
			s.vars[len(s.vars)-2].value = key
			s.vars[len(s.vars)-1].value = elem
		}
		s.walk(elem, n.List)
	}
	empty := true
	switch val.Kind() {
	case reflect.Array, reflect.Slice:
		for i := 0; i < val.Len(); i++ {
			empty = false
			one(reflect.ValueOf(i), val.Index(i))
		}
	case reflect.Map:
		keys := val.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
		for _, k := range keys {
			empty = false
			one(k, val.MapIndex(k))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		for i := int64(0); i < val.Int(); i++ {
			empty = false
			iv := reflect.ValueOf(i).Convert(val.Type())
			one(iv, iv)
		}
	case reflect.Invalid:
	default:
		s.errorf("range can't iterate over %s", val.Type())
	}
	if empty && n.ElseList != nil {
		s.walk(dot, n.ElseList)
	}
}

func (s *state) pipeline(dot reflect.Value, pipe *parse.PipeNode) reflect.Value {
	if pipe == nil {
		return reflect.Value{}
	}
	s.node = pipe
	var v reflect.Value
	for i, cmd := range pipe.Cmds {
		final := v
		if i == 0 {
			final = missing
		}
		v = s.command(dot, cmd, final)
		if v.Kind() == reflect.Interface && v.Type().NumMethod() == 0 {
			// An any holds its value (or nothing), as in text/template.
			v = reflect.ValueOf(v.Interface())
		}
	}
	for _, d := range pipe.Decl {
		if pipe.IsAssign {
			s.setVar(d.Ident[0], v)
		} else {
			s.vars = append(s.vars, variable{d.Ident[0], v})
		}
	}
	return v
}

// missing marks "no value piped in" apart from a piped-in invalid value.
var missing = reflect.ValueOf(missingType{})

type missingType struct{}

func (s *state) command(dot reflect.Value, cmd *parse.CommandNode, final reflect.Value) reflect.Value {
	s.node = cmd
	first := cmd.Args[0]
	switch n := first.(type) {
	case *parse.FieldNode:
		return s.fields(dot, n.Ident, cmd.Args, final)
	case *parse.ChainNode:
		return s.fields(s.arg(dot, n.Node), n.Field, cmd.Args, final)
	case *parse.IdentifierNode:
		return s.call(dot, n.Ident, cmd.Args, final)
	case *parse.VariableNode:
		return s.fields(s.lookupVar(n.Ident[0]), n.Ident[1:], cmd.Args, final)
	}
	if len(cmd.Args) > 1 || final != missing {
		s.errorf("%s takes no arguments", first)
	}
	return s.arg(dot, first)
}

// arg evaluates one operand.
func (s *state) arg(dot reflect.Value, n parse.Node) reflect.Value {
	s.node = n
	switch n := n.(type) {
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		return reflect.Value{}
	case *parse.BoolNode:
		return reflect.ValueOf(n.True)
	case *parse.StringNode:
		return reflect.ValueOf(n.Text)
	case *parse.NumberNode:
		switch {
		case n.IsInt:
			return reflect.ValueOf(int(n.Int64))
		case n.IsFloat:
			return reflect.ValueOf(n.Float64)
		}
		s.errorf("number %s is not supported", n.Text)
	case *parse.FieldNode:
		return s.fields(dot, n.Ident, nil, missing)
	case *parse.VariableNode:
		return s.fields(s.lookupVar(n.Ident[0]), n.Ident[1:], nil, missing)
	case *parse.ChainNode:
		return s.fields(s.arg(dot, n.Node), n.Field, nil, missing)
	case *parse.PipeNode:
		return s.pipeline(dot, n)
	case *parse.IdentifierNode:
		return s.call(dot, n.Ident, nil, missing)
	}
	s.errorf("can't evaluate %s", n)
	return reflect.Value{}
}

// fields follows a chain of field names (.A.B.C) from v.
func (s *state) fields(v reflect.Value, idents []string, args []parse.Node, final reflect.Value) reflect.Value {
	if len(idents) == 0 {
		if len(args) > 1 || final != missing {
			s.errorf("a variable takes no arguments")
		}
		return v
	}
	if len(args) > 1 || final != missing {
		s.errorf("%s is a field, not a function: it takes no arguments", idents[len(idents)-1])
	}
	for _, name := range idents {
		v = s.field(v, name)
	}
	return v
}

func (s *state) field(v reflect.Value, name string) reflect.Value {
	if !v.IsValid() {
		s.errorf("nil data; no entry for key %q", name)
	}
	typ := v.Type()
	v = indirect(v)
	switch v.Kind() {
	case reflect.Struct:
		if f, ok := v.Type().FieldByName(name); ok {
			if !f.IsExported() {
				s.errorf("%s is an unexported field of struct type %s", name, typ)
			}
			fv, err := v.FieldByIndexErr(f.Index)
			if err != nil {
				s.errorf("%v", err)
			}
			return fv
		}
	case reflect.Map:
		if reflect.TypeOf(name).AssignableTo(v.Type().Key()) {
			return v.MapIndex(reflect.ValueOf(name))
		}
	case reflect.Invalid:
		s.errorf("nil pointer evaluating %s.%s", typ, name)
	}
	s.errorf("can't evaluate field %s in type %s (templates read fields; methods are not called)", name, typ)
	return reflect.Value{}
}

func (s *state) lookupVar(name string) reflect.Value {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value
		}
	}
	s.errorf("undefined variable %s", name)
	return reflect.Value{}
}

func (s *state) setVar(name string, v reflect.Value) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return
		}
	}
	s.errorf("undefined variable %s", name)
}

// call runs a function: a builtin or one of the FuncMap.
func (s *state) call(dot reflect.Value, name string, args []parse.Node, final reflect.Value) reflect.Value {
	var operands []parse.Node
	if len(args) > 1 {
		operands = args[1:]
	}
	if name == "and" || name == "or" {
		return s.andOr(dot, name, operands, final)
	}
	vals := make([]reflect.Value, 0, len(operands)+1)
	for _, a := range operands {
		vals = append(vals, s.arg(dot, a))
	}
	if final != missing {
		vals = append(vals, final)
	}
	if b, ok := builtins[name]; ok {
		v, err := b(vals)
		if err != nil {
			s.errorf("%s: %v", name, err)
		}
		return v
	}
	fn, ok := s.t.funcs[name]
	if !ok {
		s.errorf("function %q not defined", name)
	}
	return s.callFunc(name, fn, vals)
}

// andOr short-circuits, as text/template does: the first operand that
// decides the result, else the last.
func (s *state) andOr(dot reflect.Value, name string, operands []parse.Node, final reflect.Value) reflect.Value {
	var v reflect.Value
	for i := 0; i < len(operands)+1; i++ {
		if i < len(operands) {
			v = s.arg(dot, operands[i])
		} else if final != missing {
			v = final
		} else {
			break
		}
		if truth(v) == (name == "or") {
			return v
		}
	}
	if len(operands) == 0 && final == missing {
		s.errorf("%s needs arguments", name)
	}
	return v
}

// callFunc calls one of the FuncMap with vals fitted to its parameters.
func (s *state) callFunc(name string, fn reflect.Value, vals []reflect.Value) reflect.Value {
	ft := fn.Type()
	if n := ft.NumIn(); len(vals) < n && !(ft.IsVariadic() && len(vals) >= n-1) {
		s.errorf("%s: too few arguments (%d, wants %d)", name, len(vals), n)
	}
	in := make([]reflect.Value, len(vals))
	for i, v := range vals {
		var want reflect.Type
		switch {
		case ft.IsVariadic() && i >= ft.NumIn()-1:
			want = ft.In(ft.NumIn() - 1).Elem()
		case i < ft.NumIn():
			want = ft.In(i)
		default:
			s.errorf("%s: too many arguments (%d, wants %d)", name, len(vals), ft.NumIn())
		}
		in[i] = s.convert(name, i, v, want)
	}
	out := fn.Call(in)
	if len(out) == 2 && !out[1].IsNil() {
		s.errorf("%s: %v", name, out[1].Interface())
	}
	return out[0]
}

// convert fits an argument to a function's parameter type.
func (s *state) convert(fn string, i int, v reflect.Value, want reflect.Type) reflect.Value {
	if !v.IsValid() {
		switch want.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
			return reflect.Zero(want)
		}
		s.errorf("%s: argument %d is missing (wants %s)", fn, i+1, want)
	}
	if v.Type().AssignableTo(want) {
		return v
	}
	if v.Kind() == want.Kind() && isBasic(v.Kind()) {
		// A string or number of another named type (a constant in the
		// template, a status type of its own).
		return v.Convert(want)
	}
	if v.Kind() == reflect.Interface && !v.IsNil() && v.Elem().Type().AssignableTo(want) {
		return v.Elem()
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Type().AssignableTo(want) {
		return v.Elem()
	}
	s.errorf("%s: argument %d is a %s, wants %s", fn, i+1, v.Type(), want)
	return reflect.Value{}
}

// print writes a value as text/template does.
func (s *state) print(v reflect.Value) {
	// Pointers are followed to what they hold; fmt prints a nil one.
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		io.WriteString(s.w, "<no value>")
		return
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func:
		s.errorf("can't print a value of type %s", v.Type())
	}
	if !v.Type().Implements(errorType) && !v.Type().Implements(stringerType) && v.CanAddr() {
		if pt := reflect.PointerTo(v.Type()); pt.Implements(errorType) || pt.Implements(stringerType) {
			v = v.Addr()
		}
	}
	if _, err := fmt.Fprint(s.w, v.Interface()); err != nil {
		s.errorf("writing: %v", err)
	}
}

func isBasic(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

var (
	errorType    = reflect.TypeFor[error]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// indirect follows pointers and interfaces to the value they hold; a nil
// one gives the invalid Value.
func indirect(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// truth is text/template's: non-zero numbers, non-empty strings and
// collections, non-nil pointers, true, and any struct.
func truth(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0
	case reflect.Bool:
		return v.Bool()
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.Interface, reflect.UnsafePointer:
		return !v.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0
	}
	return true
}

// builtins are the functions every template has (and and or are handled
// in call, as they evaluate their operands lazily).
var builtins = map[string]func([]reflect.Value) (reflect.Value, error){
	"and":   nil,
	"or":    nil,
	"not":   builtinNot,
	"len":   builtinLen,
	"index": builtinIndex,
	"print": func(a []reflect.Value) (reflect.Value, error) { return reflect.ValueOf(fmt.Sprint(ifaces(a)...)), nil },
	"println": func(a []reflect.Value) (reflect.Value, error) {
		return reflect.ValueOf(fmt.Sprintln(ifaces(a)...)), nil
	},
	"printf": builtinPrintf,
	"eq":     builtinEq,
	"ne":     compareWith(func(c int) bool { return c != 0 }, true),
	"lt":     compareWith(func(c int) bool { return c < 0 }, false),
	"le":     compareWith(func(c int) bool { return c <= 0 }, false),
	"gt":     compareWith(func(c int) bool { return c > 0 }, false),
	"ge":     compareWith(func(c int) bool { return c >= 0 }, false),
}

func ifaces(a []reflect.Value) []any {
	out := make([]any, len(a))
	for i, v := range a {
		if v.IsValid() {
			out[i] = v.Interface()
		}
	}
	return out
}

func builtinNot(a []reflect.Value) (reflect.Value, error) {
	if len(a) != 1 {
		return reflect.Value{}, fmt.Errorf("takes one argument, got %d", len(a))
	}
	return reflect.ValueOf(!truth(a[0])), nil
}

func builtinLen(a []reflect.Value) (reflect.Value, error) {
	if len(a) != 1 {
		return reflect.Value{}, fmt.Errorf("takes one argument, got %d", len(a))
	}
	v := indirect(a[0])
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return reflect.ValueOf(v.Len()), nil
	}
	return reflect.Value{}, fmt.Errorf("len of %s", a[0].Type())
}

func builtinIndex(a []reflect.Value) (reflect.Value, error) {
	if len(a) == 0 {
		return reflect.Value{}, errors.New("needs a value to index")
	}
	v := indirect(a[0])
	for _, k := range a[1:] {
		k = indirect(k)
		switch v.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			if !k.CanInt() {
				return reflect.Value{}, fmt.Errorf("cannot index %s with %s", v.Type(), k.Type())
			}
			i := k.Int()
			if i < 0 || int(i) >= v.Len() {
				return reflect.Value{}, fmt.Errorf("index %d out of range", i)
			}
			v = v.Index(int(i))
		case reflect.Map:
			if !k.IsValid() || !k.Type().AssignableTo(v.Type().Key()) {
				return reflect.Value{}, fmt.Errorf("cannot index %s with %v", v.Type(), k)
			}
			e := v.MapIndex(k)
			if !e.IsValid() {
				e = reflect.Zero(v.Type().Elem())
			}
			v = e
		default:
			return reflect.Value{}, fmt.Errorf("can't index item of type %s", v.Type())
		}
	}
	return v, nil
}

func builtinPrintf(a []reflect.Value) (reflect.Value, error) {
	if len(a) == 0 || a[0].Kind() != reflect.String {
		return reflect.Value{}, errors.New("needs a format string")
	}
	return reflect.ValueOf(fmt.Sprintf(a[0].String(), ifaces(a[1:])...)), nil
}

// compareWith builds ne, lt, le, gt and ge over basic kinds: values
// compare by kind (a named string type equals a string constant), as in
// text/template.
func compareWith(ok func(int) bool, equality bool) func([]reflect.Value) (reflect.Value, error) {
	return func(a []reflect.Value) (reflect.Value, error) {
		if len(a) != 2 {
			return reflect.Value{}, fmt.Errorf("takes two arguments, got %d", len(a))
		}
		c, err := compare(indirectIface(a[0]), indirectIface(a[1]), equality)
		if err != nil {
			return reflect.Value{}, err
		}
		return reflect.ValueOf(ok(c)), nil
	}
}

// builtinEq is true when its first argument equals any of the others.
func builtinEq(a []reflect.Value) (reflect.Value, error) {
	if len(a) < 2 {
		return reflect.Value{}, fmt.Errorf("takes at least two arguments, got %d", len(a))
	}
	for _, y := range a[1:] {
		c, err := compare(indirectIface(a[0]), indirectIface(y), true)
		if err != nil {
			return reflect.Value{}, err
		}
		if c == 0 {
			return reflect.ValueOf(true), nil
		}
	}
	return reflect.ValueOf(false), nil
}

func indirectIface(v reflect.Value) reflect.Value {
	for v.IsValid() && v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

// compare orders two values of basic kinds: -1, 0 or 1. With equality,
// values of other comparable types compare equal or not (1).
func compare(x, y reflect.Value, equality bool) (int, error) {
	if !x.IsValid() || !y.IsValid() {
		if equality {
			if x.IsValid() == y.IsValid() {
				return 0, nil
			}
			return 1, nil
		}
		return 0, errors.New("incompatible types for comparison")
	}
	switch {
	case x.Kind() == reflect.String && y.Kind() == reflect.String:
		return cmp3(x.String() < y.String(), x.String() == y.String()), nil
	case x.CanInt() && y.CanInt():
		return cmp3(x.Int() < y.Int(), x.Int() == y.Int()), nil
	case x.CanUint() && y.CanUint():
		return cmp3(x.Uint() < y.Uint(), x.Uint() == y.Uint()), nil
	case x.CanFloat() && y.CanFloat():
		return cmp3(x.Float() < y.Float(), x.Float() == y.Float()), nil
	case x.Kind() == reflect.Bool && y.Kind() == reflect.Bool && equality:
		return cmp3(false, x.Bool() == y.Bool()), nil
	case equality && x.Type() == y.Type() && x.Type().Comparable():
		return cmp3(false, x.Equal(y)), nil
	}
	return 0, fmt.Errorf("incompatible types for comparison: %s and %s", x.Type(), y.Type())
}

func cmp3(less, equal bool) int {
	switch {
	case equal:
		return 0
	case less:
		return -1
	}
	return 1
}

// less orders map keys for range.
func less(a, b reflect.Value) bool {
	c, err := compare(a, b, false)
	if err != nil {
		return fmt.Sprint(a.Interface()) < fmt.Sprint(b.Interface())
	}
	return c < 0
}

// Render executes name into a string.
func (t *Template) Render(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, name, data); err != nil {
		return "", err
	}
	return b.String(), nil
}
