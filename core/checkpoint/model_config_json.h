#pragma once
// Reading a Hugging Face config.json into a ModelConfig, and finding bundled models by name.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"

namespace quantplan {

// Parses config.json text. `source` names the file in error messages. Accepts the Llama, Mistral,
// Mixtral, Qwen2, Qwen2-MoE, Qwen3 and Qwen3-MoE families (and any config with the same fields);
// a multimodal config's text_config is used when present. Throws Error naming the field.
ModelConfig parse_model_config(std::string_view json_text, const std::string& source);

// Loads `path`: a config.json, or a folder holding one. Throws Error when it cannot be read.
// Refuses files larger than 16 MiB (no config.json is).
ModelConfig load_model_config(const std::filesystem::path& path);

// A bundled model: its command-line name and the Hugging Face repository its config came from.
struct BundledModel {
    std::string name;
    std::string hf_repo;
    std::vector<std::string> aliases;
    // false: the config.json is bundled as evidence for the measurement corpus (a model its records
    // name), but its architecture is one quantplan does not price, so loading it is refused with
    // the parser's one line; the window does not list it. catalog.json's "priced" (default true).
    bool priced = true;
};

// Reads models/catalog.json under `models_dir`.
std::vector<BundledModel> load_model_catalog(const std::filesystem::path& models_dir);

// The bundled model a model argument names (as resolve_model matches it), or nullptr.
const BundledModel* find_bundled_model(const std::vector<BundledModel>& catalog, std::string_view argument);

// Resolves a model argument: a bundled name (case-insensitive), its Hugging Face repo name
// ("Qwen/Qwen3-8B" or "Qwen3-8B"), an alias, or a path to a config.json or a folder with one.
// Throws Error("--model", ...) listing the bundled names when nothing matches.
ModelConfig resolve_model(std::string_view argument, const std::filesystem::path& models_dir);

}  // namespace quantplan
