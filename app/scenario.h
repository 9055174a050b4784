#pragma once
// Scenario files: a JSON object of option values (keys as the long options without dashes, '-'
// as '_'), alone or as the steps of a lecture scenario (assets/scenarios/, docs/report.md).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli_options.h"

namespace quantplan::app {

// Applies one scenario object to `options`. A field the command line set to something other than
// its default wins over the scenario (CliOptions keeps values, not where they came from, so an
// option given with its default value counts as not given). Descriptive keys ("name", "title",
// "note", "description") are ignored. Throws Error naming `where` and the key for an unknown key
// or a value of the wrong type.
void apply_scenario(CliOptions& options, const nlohmann::json& scenario, const std::string& where);

// Reads the scenario file `spec` ("FILE" or "FILE#N") and applies it: a plain object as is, a
// lecture scenario ({"name", "steps": [...]}) by merging steps 1..N in order (N = 1 without "#N",
// so a step needs to list only what changes). Throws Error("--scenario") for a missing, oversized
// or malformed file, or a step number out of range.
void apply_scenario_file(CliOptions& options, const std::string& spec);

}  // namespace quantplan::app
