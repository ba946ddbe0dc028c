package gh

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// perPage is the page size of every list call: GitHub's largest, so a
// list costs as few requests as it can.
const perPage = 100

// A list planex reads from GitHub is bounded, because people without
// write access add to most of them: anyone may comment on a public
// repository's issue or review its pull request, each comment up to
// 65,536 characters (256 KiB of UTF-8), so a thread of thousands made
// every listing hold all of it (and read page after page of it before
// every decision, once for each comment that asked for planex). A list
// past these bounds is refused: reading only part of it could miss the
// comment that decides (a cancel, a newer plan), and a decision on part
// of a thread is not one planex makes.
const (
	// maxListItems is the most entries one listing reads: 50 pages.
	maxListItems = 5000
	// maxListText is the most text (comment bodies, patches) one
	// listing keeps: more than 250 comments of GitHub's largest size,
	// far beyond any thread people write.
	maxListText = 64 << 20
)

// ErrListTooLong is matched (errors.Is) by the error of a listing that
// passed maxListItems entries or maxListText of text.
var ErrListTooLong = errors.New("list too long for planex to read")

// listBound is the bound of one listing; the Client's is the constants'
// (tests make it smaller).
type listBound struct {
	items int
	text  int
}

// defaultListBound is the bound every listing has.
func defaultListBound() listBound { return listBound{items: maxListItems, text: maxListText} }

// pageFetcher fetches one page of a list; the caller puts lo into its
// call's options.
type pageFetcher[T any] func(lo github.ListOptions) ([]T, *github.Response, error)

// eachPage fetches a list page after page and hands every item to visit,
// in order, until visit returns false or GitHub reports no next page. It
// stops with ErrListTooLong past b.items entries, or at a next page once
// it has seen b.items.
func eachPage[T any](b listBound, fetch pageFetcher[T], visit func(T) bool) error {
	lo := github.ListOptions{PerPage: perPage}
	seen := 0
	for {
		page, resp, err := fetch(lo)
		if err != nil {
			return err
		}
		for _, item := range page {
			if seen++; seen > b.items {
				return tooLong(b)
			}
			if !visit(item) {
				return nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil
		}
		if seen >= b.items {
			// A next page holds more: no request is spent to be told so.
			return tooLong(b)
		}
		lo.Page = resp.NextPage
	}
}

// allPages returns every item of a list, in order; nil on an error. text
// is the size of an item's text (its body, its patch), which counts
// against b.text.
func allPages[T any](b listBound, fetch pageFetcher[T], text func(T) int) ([]T, error) {
	var out []T
	held := 0
	var over error
	err := eachPage(b, fetch, func(item T) bool {
		if held += text(item); held > b.text {
			over = tooLong(b)
			return false
		}
		out = append(out, item)
		return true
	})
	if err == nil {
		err = over
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxReadersText is how much of a comment's text planex keeps when its
// author is neither a bot nor a collaborator, member or owner of the
// repository (GitHub's author_association): planex acts on no such
// comment's text beyond a command's first line, and a reader filling a
// thread with comments of GitHub's largest size would otherwise reach
// maxListText with a few hundred and stop planex reading the thread for
// everyone.
const maxReadersText = 4 << 10

// readersText is body as a listing keeps it: whole for a bot's or a
// collaborator's, member's or owner's comment, else cut to
// maxReadersText (at a rune's start).
func readersText(body *string, u *github.User, association string) *string {
	if body == nil || len(*body) <= maxReadersText {
		return body
	}
	switch association {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return body
	}
	if u.GetType() == "Bot" {
		return body
	}
	cut := maxReadersText
	for cut > 0 && !utf8.RuneStart((*body)[cut]) {
		cut--
	}
	s := (*body)[:cut]
	return &s
}

// tooLong is the error of a listing past b.
func tooLong(b listBound) error {
	return fmt.Errorf("%w: it holds more than %d entries or %d MiB of text, and planex decides nothing on part of it "+
		"(delete or hide the spam, or lock the conversation and start again on a new issue)", ErrListTooLong, b.items, b.text>>20)
}
