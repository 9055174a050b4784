#pragma once
// The modes of the executable besides the headless plan. Each lives in its own file.
#include <iosfwd>

#include "app/cli_options.h"

namespace quantplan::app {

// --inspect PATH: read a checkpoint's headers and compare with the prediction (inspect_command.cpp).
int run_inspect(const CliOptions& options, std::ostream& out, std::ostream& err);

// --validate: check the predictions on an NVIDIA GPU (validate_command.cpp).
int run_validate(const CliOptions& options, std::ostream& out, std::ostream& err);

// --headless --out DIR: write a report folder (report_command.cpp).
int run_report(const CliOptions& options, std::ostream& out, std::ostream& err);

// True when this build has the planner window.
bool gui_available();

// Opens the planner window (gui_main.cpp); returns the exit code of the event loop.
int run_gui(int argc, char** argv, const CliOptions& options);

}  // namespace quantplan::app
