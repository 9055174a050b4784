#pragma once
// Where the bundled data (models/, assets/) lives: the source tree when run from the build tree,
// <prefix>/share/quantplan when installed, or $QUANTPLAN_DATA_DIR.
#include <filesystem>

namespace quantplan::app {

// The folder holding models/ and assets/. Throws Error when none is found.
std::filesystem::path data_dir();

inline std::filesystem::path models_dir() { return data_dir() / "models"; }
inline std::filesystem::path gpus_dir() { return data_dir() / "assets" / "gpus"; }
inline std::filesystem::path engine_profiles_dir() { return data_dir() / "assets" / "engines" / "profiles"; }
inline std::filesystem::path engine_fit_file() { return data_dir() / "assets" / "engines" / "fit" / "engine-fit.json"; }
inline std::filesystem::path serving_fit_file() { return data_dir() / "assets" / "engines" / "fit" / "serving-fit.json"; }
inline std::filesystem::path serving_runs_dir() { return data_dir() / "assets" / "serving-runs"; }
inline std::filesystem::path measurements_dir() { return data_dir() / "assets" / "measurements"; }
inline std::filesystem::path scenarios_dir() { return data_dir() / "assets" / "scenarios"; }
inline std::filesystem::path kv_transfer_fit_file() { return data_dir() / "assets" / "engines" / "fit" / "kv-transfer-fit.json"; }
inline std::filesystem::path spec_fit_file() { return data_dir() / "assets" / "engines" / "fit" / "spec-fit.json"; }
inline std::filesystem::path spec_engines_file() { return data_dir() / "assets" / "engines" / "speculative" / "speculative.json"; }
inline std::filesystem::path disagg_measurements_file() { return data_dir() / "assets" / "measurements" / "disaggregated" / "disaggregated-serving.json"; }
inline std::filesystem::path spec_measurements_file() { return data_dir() / "assets" / "measurements" / "speculative" / "speculative-decoding.json"; }
inline std::filesystem::path interconnects_dir() { return data_dir() / "assets" / "interconnects"; }
inline std::filesystem::path gpu_prices_file() { return data_dir() / "assets" / "prices" / "gpu-prices.json"; }

}  // namespace quantplan::app
