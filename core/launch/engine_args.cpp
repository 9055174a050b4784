#include "core/launch/engine_args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/launch/json_fields.h"
#include "core/base/text_file.h"

namespace quantplan::launch {
namespace {

struct KindName {
    ArgKind kind;
    const char* name;
};
constexpr KindName kKinds[] = {
    {ArgKind::Flag, "flag"}, {ArgKind::BoolOptional, "bool_optional"}, {ArgKind::Int, "int"},   {ArgKind::Float, "float"},
    {ArgKind::Str, "str"},   {ArgKind::Choice, "choice"},              {ArgKind::Json, "json"}, {ArgKind::List, "list"},
    {ArgKind::BoolValue, "bool_value"},
};

using detail::string_field;
using detail::string_list;

// The from/to pair of a range as version indices.
std::pair<std::size_t, std::size_t> range_of(const EngineArgs& data, const nlohmann::json& j, const std::string& at) {
    const std::string from = string_field(j, "from", at), to = string_field(j, "to", at);
    const auto f = data.version_index(from), t = data.version_index(to);
    if (!f) throw Error(at + ".from", "'" + from + "' is not in versions");
    if (!t) throw Error(at + ".to", "'" + to + "' is not in versions");
    if (*t < *f) throw Error(at, "'to' (" + to + ") comes before 'from' (" + from + ")");
    return {*f, *t};
}

bool parses_int(std::string_view text) {
    if (text.empty() || text.size() > 20) return false;
    std::size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
    if (i == text.size()) return false;
    for (; i < text.size(); ++i)
        if (text[i] < '0' || text[i] > '9') return false;
    return true;
}

bool parses_float(std::string_view text) {
    if (text.empty() || text.size() > 64) return false;
    const std::string s(text);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && errno == 0 && std::isfinite(v);
}

bool parses_bool_value(std::string_view text) {
    std::string s(text);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s == "true" || s == "false" || s == "1" || s == "0" || s == "yes" || s == "no";
}

// Why `value` is outside the domain of `kind` (with `choices`), or "" when it is inside.
std::string value_problem(ArgKind kind, const std::vector<std::string>& choices, std::string_view value) {
    switch (kind) {
        case ArgKind::Int:
            return parses_int(value) ? "" : "is not an integer";
        case ArgKind::Float:
            return parses_float(value) ? "" : "is not a number";
        case ArgKind::Choice:
            if (std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
            {
                std::string list;
                for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
                return "is not one of " + list;
            }
        case ArgKind::Json:
            try {
                (void)parse_untrusted_json(value, "value");
                return "";
            } catch (const Error&) {
                return "is not JSON";
            }
        case ArgKind::BoolValue:
            return parses_bool_value(value) ? "" : "is not true or false";
        default:
            return "";
    }
}

}  // namespace

std::optional<ArgKind> parse_arg_kind(std::string_view word) {
    for (const KindName& k : kKinds)
        if (word == k.name) return k.kind;
    return std::nullopt;
}

const char* arg_kind_name(ArgKind kind) {
    for (const KindName& k : kKinds)
        if (k.kind == kind) return k.name;
    return "str";
}

std::optional<std::size_t> EngineArgs::version_index(std::string_view version) const {
    for (std::size_t i = 0; i < versions.size(); ++i)
        if (versions[i].version == version) return i;
    return std::nullopt;
}

std::string EngineArgs::versions_text() const {
    if (versions.empty()) return "no versions";
    return versions.front().version + " to " + versions.back().version + " (" + std::to_string(versions.size()) + " releases)";
}

const ArgRange* EngineArgs::find(std::string_view name, std::size_t v, std::string* canonical) const {
    for (const auto& [long_name, ranges] : args)
        for (const ArgRange& r : ranges) {
            if (v < r.from || v > r.to) continue;
            if (long_name == name || std::find(r.aliases.begin(), r.aliases.end(), name) != r.aliases.end()) {
                if (canonical) *canonical = long_name;
                return &r;
            }
        }
    return nullptr;
}

std::optional<std::size_t> EngineArgs::first_accepting(std::string_view name, std::string_view value) const {
    for (std::size_t v = 0; v < versions.size(); ++v) {
        const ArgRange* r = find(name, v);
        if (r && r->kind == ArgKind::Choice && value_problem(r->kind, r->choices, value).empty()) return v;
    }
    return std::nullopt;
}

const Entrypoint* EngineArgs::entrypoint(std::size_t v) const {
    for (const Entrypoint& e : entrypoints)
        if (v >= e.from && v <= e.to) return &e;
    return nullptr;
}

const HealthEndpoint* EngineArgs::health_endpoint(std::size_t v) const {
    for (const HealthEndpoint& h : health)
        if (v >= h.from && v <= h.to) return &h;
    return nullptr;
}

EngineArgs parse_engine_args(std::string_view json_text, const std::string& source) {
    const nlohmann::json j = parse_untrusted_json(json_text, source, true);
    if (!j.is_object()) throw Error(source, "must be a JSON object");
    if (string_field(j, "format", source) != "quantplan-engine-args/1") throw Error(source + ".format", "must be quantplan-engine-args/1");
    EngineArgs data;
    data.source = source;
    data.engine = string_field(j, "engine", source);
    const auto versions = j.find("versions");
    if (versions == j.end() || !versions->is_array() || versions->empty()) throw Error(source + ".versions", "must be a non-empty list");
    for (std::size_t i = 0; i < versions->size(); ++i) {
        const std::string at = source + ".versions[" + std::to_string(i) + "]";
        const nlohmann::json& v = (*versions)[i];
        if (!v.is_object()) throw Error(at, "must be an object");
        ArgsVersion out;
        out.version = string_field(v, "version", at);
        out.archive = string_field(v, "archive", at, false);
        out.sha256 = string_field(v, "sha256", at, false);
        if (data.version_index(out.version)) throw Error(at + ".version", "'" + out.version + "' is listed twice");
        data.versions.push_back(std::move(out));
    }
    const auto entry = j.find("entrypoints");
    if (entry == j.end() || !entry->is_array() || entry->empty()) throw Error(source + ".entrypoints", "must be a non-empty list");
    for (std::size_t i = 0; i < entry->size(); ++i) {
        const std::string at = source + ".entrypoints[" + std::to_string(i) + "]";
        const nlohmann::json& e = (*entry)[i];
        if (!e.is_object()) throw Error(at, "must be an object");
        Entrypoint out;
        std::tie(out.from, out.to) = range_of(data, e, at);
        out.argv = string_list(e, "argv", at);
        if (out.argv.empty()) throw Error(at + ".argv", "must name the command");
        out.model_flag = string_field(e, "model_flag", at, false);
        out.file = string_field(e, "file", at, false);
        data.entrypoints.push_back(std::move(out));
    }
    if (const auto health = j.find("health"); health != j.end() && health->is_array()) {
        for (std::size_t i = 0; i < health->size(); ++i) {
            const std::string at = source + ".health[" + std::to_string(i) + "]";
            const nlohmann::json& h = (*health)[i];
            if (!h.is_object()) throw Error(at, "must be an object");
            HealthEndpoint out;
            std::tie(out.from, out.to) = range_of(data, h, at);
            out.path = string_field(h, "path", at);
            out.file = string_field(h, "file", at, false);
            data.health.push_back(std::move(out));
        }
    }
    const auto args = j.find("args");
    if (args == j.end() || !args->is_object() || args->empty()) throw Error(source + ".args", "must be a non-empty object");
    for (const auto& [name, ranges] : args->items()) {
        const std::string at = source + ".args[" + name + "]";
        if (name.size() < 2 || name[0] != '-') throw Error(at, "an option's name starts with '-'");
        if (!ranges.is_array()) throw Error(at, "must be a list of version ranges");
        std::vector<ArgRange>& list = data.args[name];
        for (std::size_t i = 0; i < ranges.size(); ++i) {
            const std::string ra = at + "[" + std::to_string(i) + "]";
            const nlohmann::json& r = ranges[i];
            if (!r.is_object()) throw Error(ra, "must be an object");
            ArgRange out;
            std::tie(out.from, out.to) = range_of(data, r, ra);
            const std::string kind = string_field(r, "kind", ra);
            const auto k = parse_arg_kind(kind);
            if (!k) throw Error(ra + ".kind", "'" + kind + "' is not flag, bool_optional, int, float, str, choice, json, list or bool_value");
            out.kind = *k;
            if (r.contains("item_kind") && r["item_kind"].is_string()) {
                const auto ik = parse_arg_kind(r["item_kind"].get<std::string>());
                if (!ik) throw Error(ra + ".item_kind", "'" + r["item_kind"].get<std::string>() + "' is not a kind");
                out.item_kind = *ik;
            }
            out.choices = string_list(r, "choices", ra);
            if (out.kind == ArgKind::Choice && out.choices.empty()) throw Error(ra + ".choices", "a choice needs its choices");
            out.aliases = string_list(r, "aliases", ra);
            out.dest = string_field(r, "dest", ra, false);
            if (const auto o = r.find("open"); o != r.end()) {
                if (!o->is_boolean()) throw Error(ra + ".open", "must be true or false");
                out.open = o->get<bool>();
            }
            out.file = string_field(r, "file", ra, false);
            for (const ArgRange& before : list)
                if (out.from <= before.to && before.from <= out.to) throw Error(ra, "overlaps another range of " + name);
            list.push_back(std::move(out));
        }
    }
    return data;
}

EngineArgs load_engine_args(const std::filesystem::path& dir, const std::string& engine) {
    const std::filesystem::path file = dir / (engine + ".json");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        throw Error("--engine", "no argument data for engine '" + engine + "' (" + file.string() + ")");
    return parse_engine_args(read_text_file(file.string(), "assets/engines/args/" + engine + ".json", 16u << 20),
                             "assets/engines/args/" + engine + ".json");
}

std::vector<std::string> check_arguments(const EngineArgs& data, std::size_t v, const std::vector<std::string>& args) {
    std::vector<std::string> problems;
    const std::string at = data.engine + " " + (v < data.versions.size() ? data.versions[v].version : std::string("?"));
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name = args[i];
        std::optional<std::string> inline_value;
        if (name.rfind("--", 0) == 0) {
            if (const std::size_t eq = name.find('='); eq != std::string::npos) {
                inline_value = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
        } else if (name.empty() || name[0] != '-') {
            problems.push_back(at + ": '" + args[i] + "' is not an option (a value with no option before it)");
            continue;
        }
        std::string canonical;
        const ArgRange* r = data.find(name, v, &canonical);
        bool negated = false;
        if (!r && name.rfind("--no-", 0) == 0) {
            r = data.find("--" + name.substr(5), v, &canonical);
            negated = r != nullptr;
            if (r && r->kind != ArgKind::BoolOptional) r = nullptr;
        }
        if (!r) {
            problems.push_back(at + ": unknown option " + name);
            continue;
        }
        if (negated || r->kind == ArgKind::Flag || r->kind == ArgKind::BoolOptional) {
            if (inline_value) problems.push_back(at + ": " + name + " takes no value");
            continue;
        }
        if (r->kind == ArgKind::List) {
            std::vector<std::string> values;
            if (inline_value) values.push_back(*inline_value);
            while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) values.push_back(args[++i]);
            if (values.empty()) problems.push_back(at + ": " + name + " needs at least one value");
            for (const std::string& value : values)
                if (const std::string p = value_problem(r->item_kind, r->choices, value); !p.empty())
                    problems.push_back(at + ": " + name + " '" + value + "' " + p);
            continue;
        }
        std::string value;
        if (inline_value) {
            value = *inline_value;
        } else if (i + 1 < args.size()) {
            value = args[++i];
        } else {
            problems.push_back(at + ": " + name + " needs a value");
            continue;
        }
        if (const std::string p = value_problem(r->kind, r->choices, value); !p.empty()) problems.push_back(at + ": " + name + " '" + value + "' " + p);
    }
    return problems;
}

}  // namespace quantplan::launch
