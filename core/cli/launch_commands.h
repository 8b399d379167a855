// `vramplan import FILE [--format F] [--json]` and `vramplan export --to FORMAT FILE [--json]`:
// the import and export ops of the table (docs/planner.md, "Formats and their keys").
#pragma once

namespace vramplan::cli {

// Runs the command when argv[1] is "import" or "export" and returns its exit code (0 ok, 2 bad
// input, 1 usage or I/O); -1 when argv[1] is neither.
int RunLaunchCommand(int argc, char** argv);

}  // namespace vramplan::cli
