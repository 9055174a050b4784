#pragma once
// Shared fixtures of the core tests: bundled models and GPU profiles from the source tree.
#include <filesystem>
#include <functional>
#include <string>

#include "core/base/error.h"
#include "core/checkpoint/model_config_json.h"
#include "core/hardware/gpu.h"

namespace quantplan::test {

inline std::filesystem::path source_dir() { return QUANTPLAN_SOURCE_DIR; }
inline std::filesystem::path models_dir() { return source_dir() / "models"; }
inline std::filesystem::path gpus_dir() { return source_dir() / "assets" / "gpus"; }

// A bundled model by its command-line name.
inline ModelConfig bundled_model(const std::string& name) { return resolve_model(name, models_dir()); }

// A bundled GPU profile by id.
inline GpuProfile bundled_gpu(const std::string& id) { return resolve_gpu(id, gpus_dir()); }

// True when `f` throws quantplan::Error whose message contains `fragment` (the field it names).
inline bool throws_naming(const std::function<void()>& f, const std::string& fragment) {
    try {
        f();
    } catch (const Error& e) {
        return std::string(e.what()).find(fragment) != std::string::npos;
    }
    return false;
}

}  // namespace quantplan::test
