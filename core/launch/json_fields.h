#pragma once
// The launch folder's data readers (engine_args.cpp, launch.cpp) share these: a string field and
// a list of strings from a JSON object, each refused in one line naming the field.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace quantplan::launch::detail {

// `j[key]` as a string; "" when absent or null and not `required`.
inline std::string string_field(const nlohmann::json& j, const char* key, const std::string& at, bool required = true) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) throw Error(at + "." + key, "missing");
        return {};
    }
    if (!it->is_string()) throw Error(at + "." + key, "must be a string");
    return it->get<std::string>();
}

// `j[key]` as a list of strings; empty when absent or null.
inline std::vector<std::string> string_list(const nlohmann::json& j, const char* key, const std::string& at) {
    std::vector<std::string> out;
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return out;
    if (!it->is_array()) throw Error(at + "." + key, "must be a list of strings");
    for (const auto& v : *it) {
        if (!v.is_string()) throw Error(at + "." + key, "must be a list of strings");
        out.push_back(v.get<std::string>());
    }
    return out;
}

}  // namespace quantplan::launch::detail
