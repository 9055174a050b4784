#pragma once
// Parsing JSON that came from an untrusted file (a safetensors header, a config.json of a
// downloaded checkpoint): nesting depth bounded before any value is built, duplicate keys of the
// root object reported, and error messages cut to a line so that a hostile token cannot flood them.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace quantplan {

// Deepest nesting of objects and arrays accepted; published configs nest fewer than 10 levels.
inline constexpr int kMaxUntrustedJsonDepth = 64;

// Longest error text quoted from the JSON library (its message may echo a hostile token).
inline constexpr std::size_t kMaxQuotedErrorChars = 160;

// Parses `text`. Throws Error(source, ...) when it is not JSON (a raw NUL byte included: the JSON
// library would stop there and ignore the rest), nests deeper than `max_depth`, or (with
// `reject_duplicate_root_keys`) names a key of the root object twice.
nlohmann::json parse_untrusted_json(std::string_view text, const std::string& source, bool reject_duplicate_root_keys = false,
                                    int max_depth = kMaxUntrustedJsonDepth);

// As parse_untrusted_json, keeping object keys in file order (config_groups, GPTQModel "dynamic"
// and ignore lists are matched first to last).
nlohmann::ordered_json parse_untrusted_ordered_json(std::string_view text, const std::string& source,
                                                    int max_depth = kMaxUntrustedJsonDepth);

// `text` with the literals Python's json module writes for non-finite numbers (NaN, Infinity,
// -Infinity) outside strings replaced by null, which JSON has: SGLang writes "request_rate":
// Infinity, Hugging Face configs carry Infinity. Other text is unchanged.
std::string null_python_literals(std::string_view text);

// `text` cut to `max_chars` characters with "..." appended when it was longer.
std::string clip_text(std::string_view text, std::size_t max_chars = kMaxQuotedErrorChars);

// True when `bytes` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view bytes);

}  // namespace quantplan
