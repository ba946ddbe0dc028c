package ghfake

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/planexhq/planex/internal/abbrev"
)

// trimmedSpec is GitHub's official REST description reduced to the
// operations this fake serves. To serve another operation, add it to
// routes.txt and regenerate from the full description:
//
//	cd internal/ghfake && go run ./gen/main.go -in /path/to/api.github.com.json.gz
//
//go:embed testdata/api.github.com.trimmed.json.gz
var trimmedSpec []byte

// specHost is the host the description's servers entry names; incoming
// requests are re-addressed to it before routing.
const specHost = "api.github.com"

// Spec is a parsed REST description plus a router over it. It is read-only
// after LoadSpec returns and safe to share between servers and goroutines.
type Spec struct {
	doc    *openapi3.T
	router routers.Router
}

// LoadSpec parses the embedded, trimmed REST description. Parsing takes a
// few milliseconds; tests that start many fakes may load it once and pass
// it with WithSpec.
func LoadSpec() (*Spec, error) {
	zr, err := gzip.NewReader(bytes.NewReader(trimmedSpec))
	if err != nil {
		return nil, fmt.Errorf("ghfake: opening embedded REST description: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("ghfake: reading embedded REST description: %w", err)
	}
	return ParseSpec(raw)
}

// ParseSpec parses an (uncompressed) OpenAPI 3 JSON description.
func ParseSpec(raw []byte) (*Spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("ghfake: parsing REST description: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: "https://" + specHost}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("ghfake: building router over REST description: %w", err)
	}
	return &Spec{doc: doc, router: router}, nil
}

// Operations lists the served operations as "METHOD /path/{template}".
func (s *Spec) Operations() []string {
	var out []string
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// match is the result of checking one request against the description.
type match struct {
	route  string            // "METHOD /path/{template}"
	params map[string]string // path parameters
}

// errUnknownRoute means the description has no such path or method.
var errUnknownRoute = errors.New("no such operation in the served subset of GitHub's REST description (GitHub may not have it; if it does, add it to routes.txt and regenerate)")

// validationError is a request GitHub's API would refuse.
type validationError struct {
	status int
	msg    string
}

func (e *validationError) Error() string { return e.msg }

// check routes apiPath (the path below the API root, e.g. "/repos/o/r")
// and validates the query and body of r against the operation. body is the
// already-read request body.
func (s *Spec) check(ctx context.Context, r *http.Request, apiPath string, body []byte) (*match, error) {
	routePath := apiPath
	var contentPath string
	// The contents and refs APIs take a path with slashes as one
	// parameter; the router cannot match that, so route a placeholder and
	// keep the path.
	var restParam string
	if owner, repo, kind, rest, ok := splitRest(apiPath); ok {
		contentPath, restParam = rest, restParams[kind]
		routePath = "/repos/" + owner + "/" + repo + "/" + kind + "/placeholder"
	}
	u := &url.URL{Scheme: "https", Host: specHost, Path: routePath, RawQuery: r.URL.RawQuery}
	vr, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, &validationError{status: http.StatusBadRequest, msg: err.Error()}
	}
	vr.Header = r.Header.Clone()
	if len(body) > 0 && vr.Header.Get("Content-Type") == "" {
		vr.Header.Set("Content-Type", "application/json")
	}
	route, params, err := s.router.FindRoute(vr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, apiPath, errUnknownRoute)
	}
	if contentPath != "" {
		params[restParam] = contentPath
	}
	for k, v := range params {
		if u, err := url.PathUnescape(v); err == nil {
			params[k] = u
		}
	}
	m := &match{route: route.Method + " " + route.Path, params: params}

	// Unknown query parameters are silently ignored by GitHub, which hides
	// typos; the fake refuses them so tests notice.
	known := map[string]bool{}
	for _, p := range route.Operation.Parameters {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
			known[p.Value.Name] = true
		}
	}
	for name := range r.URL.Query() {
		if !known[name] {
			return m, &validationError{status: http.StatusUnprocessableEntity,
				msg: fmt.Sprintf("%s: query parameter %q is not defined for this operation", m.route, name)}
		}
	}

	in := &openapi3filter.RequestValidationInput{
		Request:    vr,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
			SkipSettingDefaults:               true,
			RejectWhenRequestBodyNotSpecified: true,
			MultiError:                        true,
		},
	}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		return m, &validationError{status: statusFor(err), msg: fmt.Sprintf("%s: %s", m.route, summarize(err))}
	}
	return m, nil
}

// statusFor picks GitHub's status for a refused request: 400 when the body
// is not JSON at all, 422 for everything else.
func statusFor(err error) int {
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		for _, e := range multi {
			if s := statusFor(e); s == http.StatusBadRequest {
				return s
			}
		}
		return http.StatusUnprocessableEntity
	}
	var re *openapi3filter.RequestError
	if errors.As(err, &re) && re.RequestBody != nil {
		var pe *openapi3filter.ParseError
		if errors.As(err, &pe) {
			return http.StatusBadRequest
		}
	}
	return http.StatusUnprocessableEntity
}

// restParams names the parameter that takes the rest of the path, by the
// path segments before it.
var restParams = map[string]string{"contents": "path", "git/ref": "ref", "git/refs": "ref", "git/matching-refs": "ref"}

func splitRest(p string) (owner, repo, kind, rest string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 5)
	if len(parts) < 5 || parts[0] != "repos" {
		return "", "", "", "", false
	}
	owner, repo = parts[1], parts[2]
	if parts[3] == "contents" && parts[4] != "" {
		return owner, repo, "contents", parts[4], true
	}
	if parts[3] != "git" {
		return "", "", "", "", false
	}
	kind, rest, _ = strings.Cut(parts[4], "/")
	if (kind == "ref" || kind == "refs" || kind == "matching-refs") && rest != "" {
		return owner, repo, "git/" + kind, rest, true
	}
	return "", "", "", "", false
}

// summarize turns kin-openapi's verbose errors (which embed whole schemas)
// into one line per problem: where, and what is wrong.
func summarize(err error) string {
	var parts []string
	var walk func(error)
	walk = func(err error) {
		var multi openapi3.MultiError
		if errors.As(err, &multi) {
			for _, e := range multi {
				walk(e)
			}
			return
		}
		var re *openapi3filter.RequestError
		if errors.As(err, &re) {
			where := "request body"
			if re.Parameter != nil {
				where = re.Parameter.In + " parameter " + re.Parameter.Name
			}
			var se *openapi3.SchemaError
			if errors.As(re.Err, &se) {
				ptr := strings.Join(se.JSONPointer(), "/")
				if ptr != "" {
					where += " at /" + ptr
				}
				parts = append(parts, where+": "+se.Reason)
				return
			}
			var inner openapi3.MultiError
			if errors.As(re.Err, &inner) {
				for _, e := range inner {
					var se *openapi3.SchemaError
					if errors.As(e, &se) {
						parts = append(parts, where+" at /"+strings.Join(se.JSONPointer(), "/")+": "+se.Reason)
					} else {
						parts = append(parts, where+": "+abbrev.FirstLine(e.Error()))
					}
				}
				return
			}
			reason := re.Reason
			if reason == "" && re.Err != nil {
				reason = abbrev.FirstLine(re.Err.Error())
			}
			parts = append(parts, where+": "+reason)
			return
		}
		parts = append(parts, abbrev.FirstLine(err.Error()))
	}
	walk(err)
	return strings.Join(parts, "; ")
}
