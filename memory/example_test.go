package memory_test

import (
	"context"
	"fmt"
	"os"

	"github.com/fixpoint-dev/fixpoint/memory"
)

func Example() {
	ctx := context.Background()
	data, _ := os.MkdirTemp("", "memory-example-")
	defer os.RemoveAll(data)
	root, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(root)

	st, err := memory.Open(ctx, data, &memory.Options{Root: root})
	if err != nil {
		fmt.Println("memory off:", err)
		return
	}
	defer st.Close()

	// A run fails: remember it.
	id, _ := st.Add(ctx, memory.Record{Language: "python", TestID: "test_timeout",
		Excerpt: "Traceback (most recent call last):\n  File \"/tmp/a/settings.py\", line 3, in get_timeout\nKeyError: 'timeout'\n"})
	// A later attempt went green: record what fixed it.
	_ = st.Resolve(ctx, []string{id}, "+d.get('timeout', 30)", "optional settings need a default")

	// Another run, another file, same root cause.
	q := memory.Signature("python", "Traceback (most recent call last):\n  File \"/home/u/app/cfg.py\", line 9, in get_retries\nKeyError: 'retries'\n")
	fmt.Println(q)
	matches, _ := st.Recall(ctx, q, memory.RecallOptions{K: 3, Threshold: 0.35, Language: "python"})
	for _, m := range matches {
		fmt.Println(m.Lesson)
	}
	// Output:
	// lang: python
	// KeyError: 'retries'
	// frames: get_retries
	// optional settings need a default
}
