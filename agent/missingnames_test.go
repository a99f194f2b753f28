package agent

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Round 9: a test imports a helper the fix adds; collection fails with
// an ImportError before anything runs (no trace, no stack into the
// code). The module the message names is shown; so is the source that
// does the helper's job today with a method of the same name, where the
// fix calls the new helper, ahead of larger modules of the package.
func TestContextMissingImportedName(t *testing.T) {
	utils := "\"\"\"Helpers.\"\"\"\nimport os\n\n\n" + filler("py", "util_helper", 12)
	dest := "\"\"\"Destinations.\"\"\"\nfrom pathlib import Path\n\nfrom pkg.utils import (\n    util_helper0,\n    util_helper1,\n)\n\n\n" +
		filler("py", "dest_step", 60) +
		"class Destination:\n    def write(self, root, path):\n        target_dir = Path(root).resolve()\n        file = (target_dir / path).resolve()\n        if not file.is_relative_to(target_dir):\n            raise ValueError(path)\n        return util_helper0(file)\n"
	records := "\"\"\"Records.\"\"\"\nfrom pkg.utils import util_helper2\n\n\n" + filler("py", "record_step", 30)
	scripts := "\"\"\"Scripts.\"\"\"\nfrom pkg.utils import util_helper3\n\n\n" + filler("py", "script_step", 30)
	test := "import pytest\n\nfrom pkg.utils import (\n    util_helper0,\n    is_relative_to,\n)\n\n\ndef test_relative():\n    assert is_relative_to('/a/b', '/a')\n"
	snap := files("src/pkg/__init__.py", "", "src/pkg/utils.py", utils, "src/pkg/destinations.py", dest,
		"src/pkg/records.py", records, "src/pkg/scripts.py", scripts, "tests/test_utils.py", test)
	rep := &testrun.Report{ExitCode: 2, Failed: 1, Tests: []testrun.Result{{ID: "tests/test_utils.py", Name: "tests/test_utils.py",
		Status: testrun.StatusFail, File: "tests/test_utils.py", Line: 3,
		Message: "ImportError: cannot import name 'is_relative_to' from 'pkg.utils' (/workspace/src/pkg/utils.py)"}}}
	prompt, ranked := firstPrompt(snap, rep)
	if i := slices.Index(ranked, "src/pkg/destinations.py"); i < 0 || i > 2 {
		t.Errorf("ranked = %q: want the source using is_relative_to right after the failure's own files", ranked)
	}
	for _, code := range []string{
		"from pkg.utils import (\n    util_helper0,\n    util_helper1,\n)",
		"file = (target_dir / path).resolve()\nif not file.is_relative_to(target_dir):",
	} {
		if !shown(prompt, "src/pkg/destinations.py", code) {
			t.Errorf("the prompt lacks %q of destinations.py:\n%s", code, sections(prompt))
		}
	}
	if got := missingNameUsers(snap, failing("t", "tests/test_x.py", 1)); got != nil {
		t.Errorf("a failure naming no missing name ranks %q", got)
	}
}
