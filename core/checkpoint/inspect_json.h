#pragma once
// The inspector's report as JSON (keys documented in docs/inspector.md). Kept beside the inspector
// rather than in report_json.cpp because it describes a checkpoint, not a plan.
#include <nlohmann/json.hpp>

#include "core/checkpoint/inspector.h"

namespace quantplan {

// Schema version of the --inspect JSON; bumped when a key changes meaning.
inline constexpr int kInspectSchemaVersion = 1;

// The whole report.
nlohmann::json inspect_json(const InspectReport& report);

// One engine resolution (also used by the report's engines section).
nlohmann::json to_json(const EngineResolution& r);

// A parsed quantization config: method, rules, ignore list, KV cache, notes.
nlohmann::json to_json(const QuantizationConfig& q);

}  // namespace quantplan
