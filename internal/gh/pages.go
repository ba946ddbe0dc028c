package gh

import "github.com/google/go-github/v60/github"

// perPage is the page size of every list call: GitHub's largest, so a
// list costs as few requests as it can.
const perPage = 100

// pageFetcher fetches one page of a list; the caller puts lo into its
// call's options.
type pageFetcher[T any] func(lo github.ListOptions) ([]T, *github.Response, error)

// eachPage fetches a list page after page and hands every item to visit,
// in order, until visit returns false or GitHub reports no next page.
func eachPage[T any](fetch pageFetcher[T], visit func(T) bool) error {
	lo := github.ListOptions{PerPage: perPage}
	for {
		page, resp, err := fetch(lo)
		if err != nil {
			return err
		}
		for _, item := range page {
			if !visit(item) {
				return nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil
		}
		lo.Page = resp.NextPage
	}
}

// allPages returns every item of a list, in order; nil on an error.
func allPages[T any](fetch pageFetcher[T]) ([]T, error) {
	var out []T
	if err := eachPage(fetch, func(item T) bool { out = append(out, item); return true }); err != nil {
		return nil, err
	}
	return out, nil
}
