#pragma once
// Writing results as JSON: the one place core turns result structs into documents
// (docs/headless.md lists every key). Reading JSON lives in model_config_json.cpp and gpu.cpp.
#include <nlohmann/json.hpp>

#include "core/hardware/calibration.h"
#include "core/model/model.h"
#include "core/plan/measured_overlay.h"
#include "core/plan/plan.h"
#include "core/scheme/bytes.h"

namespace quantplan {

// Schema version of the headless JSON and report.json; bumped when a key changes meaning.
inline constexpr int kReportSchemaVersion = 1;

nlohmann::json to_json(const ParameterCounts& p);
nlohmann::json to_json(const CheckpointBudget& b);
nlohmann::json to_json(const DecodeStep& d);
nlohmann::json to_json(const Admission& a);
nlohmann::json to_json(const PrefillResult& p);
nlohmann::json to_json(const Crossover& c);
nlohmann::json to_json(const Decision& d);
nlohmann::json to_json(const GpuProfile& g);
nlohmann::json to_json(const EfficiencyProfile& e);

// The model section: name, architecture and parameter counts.
nlohmann::json model_json(const ModelConfig& m, const ParameterCounts& p);

// One scheme's entry of the `schemes` array.
nlohmann::json scheme_json(const SchemeResult& r);

// A scheme's error bands (`bands` of a scheme entry under an engine profile).
nlohmann::json bands_json(const SchemeBands& b);

// A scheme's `evidence`: the nearest corpus points, each with its setup, the measured value and the
// fit's prediction for it (SI units).
nlohmann::json evidence_json(const std::vector<engine::EvidencePoint>& points);

// The `engine` section: the engine asked for, the profile it resolved to, its sources and defaults.
nlohmann::json engine_json(const engine::EngineSetup& e);

// The whole plan document (model, gpu, workload, schemes, crossovers, ridges, decision).
nlohmann::json plan_json(const PlanResult& plan);

// The `measured` section (with --calibration FILE): where the calibration came from, its fitted
// profile and per-kernel errors, and the plan's measured decode steps (core/plan/measured_overlay.h).
// `source` is the file as the user named it.
nlohmann::json measured_json(const Calibration& calibration, const MeasuredOverlay& overlay, const std::string& source);

}  // namespace quantplan
