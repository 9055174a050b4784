#pragma once
// The launch folder turns a plan into the command that starts the engine it assumed; this header
// holds each engine version's accepted arguments and their value domains, as extracted from the
// engine's own source by scripts/extract-engine-args (assets/engines/args/, format in its README),
// and checks an argument list against them.
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quantplan::launch {

// How an option takes its value, as the engine's argparse declares it.
enum class ArgKind {
    Flag,          // store_true / store_false: no value
    BoolOptional,  // argparse.BooleanOptionalAction: --x or --no-x, no value
    Int,
    Float,
    Str,
    Choice,        // one of `choices`
    Json,          // a JSON object
    List,          // one or more values of `item_kind`
    BoolValue,     // a value such as true / false
};

// "flag", "bool_optional", ... as in the data; nullopt for another word.
std::optional<ArgKind> parse_arg_kind(std::string_view word);
const char* arg_kind_name(ArgKind kind);

// One option over a range of versions (indices into EngineArgs::versions, inclusive).
struct ArgRange {
    std::size_t from = 0, to = 0;
    ArgKind kind = ArgKind::Str;
    ArgKind item_kind = ArgKind::Str;   // List only
    std::vector<std::string> choices;   // Choice (and List of choices)
    std::vector<std::string> aliases;   // other spellings ("-tp")
    std::string dest;                   // the attribute it sets, when not the long name's ("tp_size")
    bool open = false;                  // Choice: the parser takes any string and the release
                                        // validates later; `choices` are the values it names
    std::string file;                   // where the engine declares it
};

// How the server is started over a range of versions.
struct Entrypoint {
    std::size_t from = 0, to = 0;
    std::vector<std::string> argv;      // {"vllm", "serve"}, {"python", "-m", "sglang.launch_server"}
    std::string model_flag;             // "--model", "--model-path"; "" when the model is positional
    std::string file;
};

// The server's health endpoint over a range of versions.
struct HealthEndpoint {
    std::size_t from = 0, to = 0;
    std::string path;                   // "/health"
    std::string file;
};

// One release the data was read from.
struct ArgsVersion {
    std::string version;                // "0.11.0"
    std::string archive;                // "vllm-0.11.0.tar.gz"
    std::string sha256;
};

// One engine's arguments over its releases.
struct EngineArgs {
    std::string engine;                 // "vllm", "sglang"
    std::string source;                 // the file it was read from
    std::vector<ArgsVersion> versions;  // ascending
    std::map<std::string, std::vector<ArgRange>> args;  // by the option's first long name
    std::vector<Entrypoint> entrypoints;
    std::vector<HealthEndpoint> health;

    // The index of `version` exactly as listed, or nullopt.
    std::optional<std::size_t> version_index(std::string_view version) const;
    // "0.4.0 to 0.33.0 (58 releases)".
    std::string versions_text() const;
    // The option spelled `name` (its long name or an alias) at version index `v`, with its long
    // name in *canonical when given; nullptr when that version does not accept it.
    const ArgRange* find(std::string_view name, std::size_t v, std::string* canonical = nullptr) const;
    // The first version index at which `name` accepts `value` (a Choice), or nullopt.
    std::optional<std::size_t> first_accepting(std::string_view name, std::string_view value) const;
    const Entrypoint* entrypoint(std::size_t v) const;
    const HealthEndpoint* health_endpoint(std::size_t v) const;
};

// Parses one assets/engines/args/*.json. Throws Error(source, ...) naming the field.
EngineArgs parse_engine_args(std::string_view json_text, const std::string& source);
// Loads `dir`/<engine>.json. Throws Error when it is missing or malformed.
EngineArgs load_engine_args(const std::filesystem::path& dir, const std::string& engine);

// What is wrong with `args` (the options after the entry point and the model) at version index
// `v`: one line per unknown option, missing or extra value, and value outside its domain. Empty
// when the version's parser accepts them all.
std::vector<std::string> check_arguments(const EngineArgs& data, std::size_t v, const std::vector<std::string>& args);

}  // namespace quantplan::launch
