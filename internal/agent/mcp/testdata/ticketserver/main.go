// ticketserver is a small stdio MCP server for planex's tests: a ticket
// tracker with one tool, lookup_ticket, and a diagnostic tool, env.
// With -pidfile it writes its process id and that of a child it leaves
// running (so a test can see both gone); with -hang it never answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type lookupIn struct {
	Key string `json:"key" jsonschema:"the ticket key, such as PX-7"`
}

type envIn struct {
	Name string `json:"name" jsonschema:"the environment variable to read"`
}

func main() {
	pidfile := flag.String("pidfile", "", "write the server's and a child's process ids here")
	hang := flag.Bool("hang", false, "read the input and never answer")
	flag.Parse()
	if *hang {
		io.Copy(io.Discard, os.Stdin)
		select {}
	}
	if *pidfile != "" {
		child := exec.Command("sleep", "1000")
		if err := child.Start(); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(*pidfile, []byte(fmt.Sprintf("%d %d\n", os.Getpid(), child.Process.Pid)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "tickets", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "lookup_ticket", Description: "Look a ticket up in the tracker."},
		func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, any, error) {
			text := fmt.Sprintf("%s: %s (%s)", in.Key, "Widgets must be blue", os.Getenv("TICKET_PREFIX"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Read one environment variable of the server."},
		func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
			v, ok := os.LookupEnv(in.Name)
			if !ok {
				v = "(unset)"
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
