#pragma once
// The modes of the executable besides the headless plan. Each lives in its own file.
#include <iosfwd>
#include <string>

#include "app/cli_options.h"
#include "core/fidelity/fit.h"

namespace quantplan::app {

// --inspect PATH: read a checkpoint's headers and compare with the prediction (inspect_command.cpp).
int run_inspect(const CliOptions& options, std::ostream& out, std::ostream& err);

// --validate: check the predictions on an NVIDIA GPU (validate_command.cpp).
int run_validate(const CliOptions& options, std::ostream& out, std::ostream& err);

// --headless --out DIR: write a report folder (report_command.cpp).
int run_report(const CliOptions& options, std::ostream& out, std::ostream& err);

// --fit-engines: fit the engine profiles to the corpus, write the fit file (fit_command.cpp).
int run_fit_engines(const CliOptions& options, std::ostream& out, std::ostream& err);

// The fidelity evaluation of the bundled corpus (plus --corpus files), with the unfitted profiles.
// `corpus_out` receives the corpus read. Throws Error for a malformed corpus or profile.
fidelity::FidelityReport run_fidelity(const CliOptions& options, fidelity::Corpus* corpus_out);

// The fidelity tables as Markdown (docs/fidelity.md quotes them), with the gate line the test reads.
std::string fidelity_markdown(const fidelity::FidelityReport& report, const fidelity::Corpus& corpus);

// --check FILE: a startup log against the prediction (check_command.cpp).
int run_check(const CliOptions& options, std::ostream& out, std::ostream& err);

// --serve: capacity planning on the simulator (serve_command.cpp, docs/capacity.md).
int run_serve(const CliOptions& options, std::ostream& out, std::ostream& err);

// True when this build has the planner window.
bool gui_available();

// Opens the planner window (gui_main.cpp); returns the exit code of the event loop.
int run_gui(int argc, char** argv, const CliOptions& options);

}  // namespace quantplan::app
