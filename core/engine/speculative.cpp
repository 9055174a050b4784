#include "core/engine/speculative.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/text_file.h"

namespace quantplan::engine {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }
double d(std::uint64_t v) { return static_cast<double>(v); }

std::string opt(std::string_view o) { return std::string(o); }

bool parse_int(std::string_view s, std::int64_t& out) {
    if (s.empty()) return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double& out) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    if (s.empty()) return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out);
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::optional<SpecMethod> method_from(std::string_view name) {
    if (name == "eagle3") return SpecMethod::Eagle3;
    if (name == "eagle") return SpecMethod::Eagle;
    if (name == "mtp") return SpecMethod::Mtp;
    if (name == "ngram") return SpecMethod::Ngram;
    if (name == "draft") return SpecMethod::Draft;
    return std::nullopt;
}

bool has_mtp(const ModelConfig& m) { return m.mtp_layers > 0 || m.qwen3_next_mtp; }

std::int64_t mtp_layers(const ModelConfig& m) { return m.mtp_layers > 0 ? m.mtp_layers : (m.qwen3_next_mtp ? 1 : 0); }

}  // namespace

std::string_view spec_method_name(SpecMethod m) {
    switch (m) {
        case SpecMethod::Eagle3: return "eagle3";
        case SpecMethod::Eagle: return "eagle";
        case SpecMethod::Mtp: return "mtp";
        case SpecMethod::Ngram: return "ngram";
        case SpecMethod::Draft: return "draft";
    }
    return "eagle3";
}

SpecRequest parse_spec(std::string_view text, std::string_view option) {
    const std::string o = opt(option);
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos)
        throw Error(o, "'" + clip_text(text, 60) + "' is not METHOD:K (METHOD one of eagle3, eagle, mtp, ngram, draft:MODEL; K the speculative tokens per step)");
    const std::string_view name = text.substr(0, colon);
    const std::optional<SpecMethod> method = method_from(name);
    if (!method) throw Error(o, "unknown method '" + clip_text(name, 40) + "' (one of eagle3, eagle, mtp, ngram, draft:MODEL)");
    SpecRequest r;
    r.method = *method;
    std::string_view rest = text.substr(colon + 1);
    if (r.method == SpecMethod::Draft) {
        const std::size_t last = rest.rfind(':');
        if (last == std::string_view::npos || last == 0) throw Error(o, "a draft model is draft:MODEL:K (MODEL a bundled name or a config.json path)");
        r.draft_model = std::string(rest.substr(0, last));
        rest = rest.substr(last + 1);
    }
    std::int64_t k = 0;
    if (!parse_int(rest, k)) throw Error(o, "K '" + clip_text(rest, 40) + "' is not a whole number of speculative tokens");
    if (k < 1) throw Error(o, "K must be at least 1 speculative token per step");
    if (k > kMaxSpecTokens) throw Error(o, "K " + std::to_string(k) + " is above " + std::to_string(kMaxSpecTokens) + " speculative tokens per step");
    r.k = k;
    return r;
}

double Acceptance::mean_length() const {
    double s = 1;
    for (double p : per_position) s += p;
    return s;
}

Acceptance acceptance_from_mean_length(double tau, std::int64_t k) {
    if (!(tau >= 1.0) || tau > d(k) + 1.0 + 1e-12)
        throw Error("--spec-acceptance", "a mean acceptance length of " + fmt("%g", tau) + " is outside [1, K + 1] = [1, " +
                                             std::to_string(k + 1) + "]");
    // 1 + a + a^2 + ... + a^K rises with a from 1 (a = 0) to K + 1 (a = 1): bisect.
    double lo = 0, hi = 1;
    const auto length = [k](double a) {
        double s = 1, p = 1;
        for (std::int64_t i = 0; i < k; ++i) s += (p *= a);
        return s;
    };
    for (int i = 0; i < 100; ++i) {
        const double mid = (lo + hi) / 2;
        (length(mid) < tau ? lo : hi) = mid;
    }
    Acceptance a;
    double p = 1;
    for (std::int64_t i = 0; i < k; ++i) a.per_position.push_back(p *= (lo + hi) / 2);
    return a;
}

Acceptance parse_acceptance(std::string_view text, std::int64_t k, std::string_view option) {
    const std::string o = opt(option);
    std::vector<double> values;
    std::string_view rest = text;
    while (true) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        double v = 0;
        if (!parse_double(item, v)) throw Error(o, "'" + clip_text(item, 40) + "' is not a number");
        values.push_back(v);
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
        if (values.size() > 64) throw Error(o, "more than 64 values");
    }
    Acceptance a;
    a.source = "--spec-acceptance";
    if (values.size() == 1 && !(values[0] < 1.0 && k == 1)) {
        if (values[0] < 0) throw Error(o, "an acceptance of " + fmt("%g", values[0]) + " is below 0");
        if (values[0] < 1.0)
            throw Error(o, "one rate " + fmt("%g", values[0]) + " for K = " + std::to_string(k) +
                               ": give K per-position rates (0.8,0.6,...) or a mean acceptance length of at least 1");
        if (values[0] > d(k) + 1.0)
            throw Error(o, "a mean acceptance length of " + fmt("%g", values[0]) + " is above K + 1 = " + std::to_string(k + 1));
        Acceptance m = acceptance_from_mean_length(values[0], k);
        m.source = a.source;
        return m;
    }
    if (static_cast<std::int64_t>(values.size()) != k)
        throw Error(o, std::to_string(values.size()) + " per-position rates for K = " + std::to_string(k) + " speculative tokens");
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i] < 0 || values[i] > 1)
            throw Error(o, "the rate at position " + std::to_string(i + 1) + " is " + fmt("%g", values[i]) + ", outside [0, 1]");
        if (i > 0 && values[i] > values[i - 1] + 1e-12)
            throw Error(o, "the rate at position " + std::to_string(i + 1) + " (" + fmt("%g", values[i]) + ") is above the one before (" +
                               fmt("%g", values[i - 1]) + "): a token is accepted only after every one before it");
    }
    a.per_position = values;
    return a;
}

Acceptance acceptance_for_k(const Acceptance& a, std::int64_t k) {
    Acceptance r = a;
    const std::int64_t n = static_cast<std::int64_t>(a.per_position.size());
    if (n == k || n == 0) {
        if (n == 0) r.per_position.assign(static_cast<std::size_t>(k), 0.0);
        return r;
    }
    if (k < n) {
        r.per_position.resize(static_cast<std::size_t>(k));
    } else {
        const double last = a.per_position.back();
        const double before = n >= 2 ? a.per_position[static_cast<std::size_t>(n - 2)] : 1.0;
        const double ratio = before > 0 ? std::clamp(last / before, 0.0, 1.0) : 0.0;
        double p = last;
        for (std::int64_t i = n; i < k; ++i) r.per_position.push_back(p *= ratio);
    }
    r.source += " (measured at K = " + std::to_string(n) + ", taken at K = " + std::to_string(k) +
                (k < n ? ": its first positions)" : ": later positions at its last conditional rate)");
    return r;
}

std::int64_t accepted_tokens(const Acceptance& a, double u) {
    std::int64_t n = 0;
    for (double p : a.per_position) {
        if (!(u < p)) break;
        ++n;
    }
    return n;
}

namespace {

Acceptance acceptance_of(const nlohmann::json& e, const std::string& where) {
    std::int64_t k = e.value("k", std::int64_t{0});
    if (e.contains("per_position_acceptance") && e["per_position_acceptance"].is_array()) {
        Acceptance a;
        for (const auto& v : e["per_position_acceptance"]) {
            if (!v.is_number()) throw Error(where + ": per_position_acceptance", "not a list of numbers");
            a.per_position.push_back(v.get<double>());
        }
        for (std::size_t i = 0; i < a.per_position.size(); ++i)
            if (a.per_position[i] < 0 || a.per_position[i] > 1 || (i > 0 && a.per_position[i] > a.per_position[i - 1] + 1e-9))
                throw Error(where + ": per_position_acceptance", "rates must lie in [0, 1] and not rise with the position");
        if (!a.per_position.empty()) return a;
    }
    if (e.contains("acceptance_length") && e["acceptance_length"].is_number()) {
        const double tau = e["acceptance_length"].get<double>();
        if (k < 1) k = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(tau - 1.0)));
        if (tau < 1 || tau > d(k) + 1) throw Error(where + ": acceptance_length", "outside [1, k + 1]");
        return acceptance_from_mean_length(tau, k);
    }
    throw Error(where, "has neither per_position_acceptance nor acceptance_length");
}

std::string str(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) return {};
    if (j[key].is_string()) return j[key].get<std::string>();
    if (j[key].is_number()) return j[key].dump();
    return {};
}

// quantplan's name for an engine's method ("" for one it does not price).
std::string our_method_name(const std::string& n) {
    if (n == "eagle" || n == "EAGLE") return "eagle";
    if (n == "eagle3" || n == "EAGLE3") return "eagle3";
    if (n == "mtp" || n == "deepseek_mtp" || n == "NEXTN") return "mtp";
    if (n == "ngram" || n == "NGRAM") return "ngram";
    if (n == "draft_model" || n == "STANDALONE") return "draft";
    return {};
}

// The version a "since" text opens with ("0.8.4 (V1). ..." -> "0.8.4"); "" when it opens with
// none ("V0 only", null): the method does not run in that range.
std::string leading_version(const std::string& text) {
    std::size_t n = 0;
    while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.' ||
                               (n > 0 && std::isalnum(static_cast<unsigned char>(text[n])) && text[n - 1] != ' ')))
        ++n;
    std::string v = text.substr(0, n);
    while (!v.empty() && v.back() == '.') v.pop_back();
    return !v.empty() && std::isdigit(static_cast<unsigned char>(v.front())) ? v : std::string();
}

std::vector<SpecEngineRange> ranges_of(const nlohmann::json& list, const std::string& where) {
    std::vector<SpecEngineRange> out;
    if (!list.is_array()) throw Error(where, "is not a list of version ranges");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const nlohmann::json& r = list[i];
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!r.is_object()) throw Error(at, "is not an object");
        SpecEngineRange e;
        e.from = str(r, "from");
        e.to = str(r, "to");
        if (e.from.empty()) throw Error(at + ": from", "missing");
        if (r.contains("methods") && r["methods"].is_object())
            for (const auto& [name, m] : r["methods"].items()) {
                const std::string ours = our_method_name(name);
                if (ours.empty()) continue;  // a method quantplan does not price (medusa, suffix, ...)
                const std::string since = leading_version(m.is_object() ? str(m, "since") : (m.is_string() ? m.get<std::string>() : std::string()));
                e.methods.emplace_back(ours, since);
            }
        if (r.contains("max_k")) {
            const nlohmann::json& mk = r["max_k"];
            if (mk.is_number_integer()) e.max_k = mk.get<std::int64_t>();
            if (mk.is_object() && mk.contains("value") && mk["value"].is_number_integer()) e.max_k = mk["value"].get<std::int64_t>();
            e.max_k_where = mk.is_object() ? str(mk, "where") : str(r, "max_k_where");
        }
        if (r.contains("disable_by_batch_size") && r["disable_by_batch_size"].is_object()) {
            const nlohmann::json& dbs = r["disable_by_batch_size"];
            e.disable_option = str(dbs, "option");
            if (dbs.value("honoured", false) && dbs.contains("default") && dbs["default"].is_number_integer())
                e.disable_above_batch = dbs["default"].get<std::int64_t>();
        }
        out.push_back(std::move(e));
    }
    return out;
}

bool in_range(const SpecEngineRange& r, std::string_view version) {
    const EngineVersion v = parse_engine_version(version, "--engine");
    if (compare_versions(v, parse_engine_version(r.from, "speculative.json: from")) < 0) return false;
    return r.to.empty() || compare_versions(v, parse_engine_version(r.to, "speculative.json: to")) <= 0;
}

}  // namespace

SpecCatalog load_spec_catalog(const std::string& engines_path, const std::string& measurements_path, const std::string& fit_path) {
    SpecCatalog c;
    if (!fit_path.empty()) c.terms = load_spec_fit(fit_path);
    c.engines_path = engines_path;
    c.defaults_path = measurements_path;
    if (!engines_path.empty()) {
        const std::string name = "speculative engines file " + engines_path;
        const nlohmann::json j = parse_untrusted_json(read_text_file(engines_path, name), name);
        if (!j.is_object() || !j.contains("engines") || !j["engines"].is_object()) throw Error(name + ": engines", "missing");
        if (j["engines"].contains("vllm")) c.vllm = ranges_of(j["engines"]["vllm"], name + ": engines.vllm");
        if (j["engines"].contains("sglang")) c.sglang = ranges_of(j["engines"]["sglang"], name + ": engines.sglang");
    }
    if (!measurements_path.empty()) {
        const std::string name = "speculative measurements " + measurements_path;
        const nlohmann::json j = parse_untrusted_json(read_text_file(measurements_path, name), name);
        if (!j.is_object() || !j.contains("acceptance_defaults") || !j["acceptance_defaults"].is_array())
            throw Error(name + ": acceptance_defaults", "missing");
        const nlohmann::json& list = j["acceptance_defaults"];
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string at = name + ": acceptance_defaults[" + std::to_string(i) + "]";
            const nlohmann::json& e = list[i];
            if (!e.is_object()) throw Error(at, "is not an object");
            SpecDefault s;
            s.family = str(e, "family");
            s.method = str(e, "method");
            s.dataset = str(e, "dataset");
            s.record = str(e, "record");
            s.note = str(e, "note");
            if (s.family.empty() || !method_from(s.method)) throw Error(at, "needs a family and a method (eagle3, eagle, mtp, ngram, draft)");
            s.acceptance = acceptance_of(e, at);
            // A mean length whose K the source does not state keeps k 0 (default_acceptance takes it
            // at the K asked).
            const bool k_stated = e.contains("k") && e["k"].is_number_integer() && e["k"].get<std::int64_t>() > 0;
            s.k = k_stated || e.contains("per_position_acceptance") ? static_cast<std::int64_t>(s.acceptance.per_position.size()) : 0;
            s.acceptance.source = "default: " + s.family + " " + s.method + (s.dataset.empty() ? "" : " on " + s.dataset) + ", mean length " +
                                  fmt("%.2f", s.acceptance.mean_length()) + (s.k > 0 ? " at K = " + std::to_string(s.k) : " (K not stated)") +
                                  (s.record.empty() ? "" : " (" + s.record + ")");
            c.defaults.push_back(std::move(s));
        }
    }
    return c;
}

std::optional<Acceptance> default_acceptance(const SpecCatalog& c, const ModelConfig& model, SpecMethod method, std::int64_t k) {
    const std::string_view m = spec_method_name(method);
    const SpecDefault* best = nullptr;
    std::size_t best_len = 0;
    for (const SpecDefault& s : c.defaults) {
        if (s.method != m) continue;
        if (s.family == model.name) {
            best = &s;
            break;
        }
        // A family prefix ending at a '-' of the model's name ("llama-3.1" for llama-3.1-70b).
        if (model.name.size() > s.family.size() && model.name.compare(0, s.family.size(), s.family) == 0 &&
            model.name[s.family.size()] == '-' && s.family.size() > best_len) {
            best = &s;
            best_len = s.family.size();
        }
    }
    if (!best && (method == SpecMethod::Ngram || method == SpecMethod::Draft))
        for (const SpecDefault& s : c.defaults)
            if (s.method == m) {
                best = &s;
                break;
            }
    if (!best) return std::nullopt;
    if (best->k == 0) {
        // The source's K is not stated: its mean length, at most K + 1, taken at the K asked.
        Acceptance a = acceptance_from_mean_length(std::min(best->acceptance.mean_length(), static_cast<double>(k + 1)), k);
        a.source = best->acceptance.source + " (taken as the mean length at K = " + std::to_string(k) + ")";
        return a;
    }
    return acceptance_for_k(best->acceptance, k);
}

const SpecEngineRange* spec_engine_range(const SpecCatalog& c, std::string_view engine, std::string_view version) {
    const std::vector<SpecEngineRange>& list = engine == "vllm" ? c.vllm : c.sglang;
    if (engine != "vllm" && engine != "sglang") return nullptr;
    for (const SpecEngineRange& r : list)
        if (version.empty() ? r.to.empty() : in_range(r, version)) return &r;
    return nullptr;
}

std::map<std::string, SpecTerms> load_spec_fit(const std::string& path) {
    const std::string name = "spec fit file " + path;
    const nlohmann::json j = parse_untrusted_json(read_text_file(path, name), name);
    if (!j.is_object() || !j.contains("engines") || !j["engines"].is_object()) throw Error(name + ": engines", "missing");
    double band_p10 = 0, band_p90 = 0;
    if (j.contains("speedup_error") && j["speedup_error"].is_object()) {
        const nlohmann::json& e = j["speedup_error"];
        const auto band = [&](const char* key) {
            if (!e.contains(key) || e[key].is_null()) return 0.0;
            if (!e[key].is_number() || !(e[key].get<double>() > -0.95) || e[key].get<double>() > 10)
                throw Error(name + ": speedup_error." + key, "must be a relative error above -0.95");
            return e[key].get<double>();
        };
        band_p10 = band("band_p10");
        band_p90 = band("band_p90");
    }
    std::map<std::string, SpecTerms> out;
    for (const auto& [engine, v] : j["engines"].items()) {
        if (!v.is_object()) throw Error(name + ": engines." + engine, "is not an object");
        const auto num = [&](const char* key) {
            if (!v.contains(key)) return 0.0;
            const nlohmann::json& x = v[key];
            if (!x.is_number() || !(x.get<double>() >= 0) || x.get<double>() > 1.0)
                throw Error(name + ": engines." + engine + "." + key, "must be seconds in [0, 1]");
            return x.get<double>();
        };
        SpecTerms& t = out[engine];
        t.draft_forward_s = num("draft_forward_s");
        t.host_per_sequence_s = num("host_per_sequence_s");
        t.ngram_per_sequence_s = num("ngram_per_sequence_s");
        t.band_p10 = band_p10;
        t.band_p90 = band_p90;
    }
    return out;
}

SpecTerms load_spec_terms(const std::string& path, std::string_view engine) {
    const std::map<std::string, SpecTerms> all = load_spec_fit(path);
    const auto it = all.find(std::string(engine));
    return it == all.end() ? SpecTerms{} : it->second;
}

SpecTerms spec_terms_for(const SpecCatalog& c, std::string_view engine) {
    const auto it = c.terms.find(std::string(engine));
    return it == c.terms.end() ? SpecTerms{} : it->second;
}

void check_spec_request(const SpecRequest& spec, const ModelConfig& target, const ModelConfig* draft, const SpecCatalog* catalog,
                        std::string_view engine, std::string_view version, std::string_view option) {
    const std::string o = opt(option);
    if (spec.method == SpecMethod::Mtp && !has_mtp(target))
        throw Error(o, "mtp: " + target.name + " has no MTP layers (its config.json declares no num_nextn_predict_layers or mtp_num_hidden_layers)");
    if (spec.method == SpecMethod::Draft) {
        if (!draft) throw Error(o, "draft: no draft model");
        if (draft->vocab_size != target.vocab_size)
            throw Error(o, "draft model " + draft->name + " has a vocabulary of " + std::to_string(draft->vocab_size) + " tokens, " + target.name +
                               " one of " + std::to_string(target.vocab_size) + ": the draft must share the target's vocabulary");
    }
    if (!catalog) return;
    const SpecEngineRange* r = spec_engine_range(*catalog, engine, version);
    if (!r) return;
    const std::string_view name = spec_method_name(spec.method);
    std::string since;
    for (const auto& [m, s] : r->methods)
        if (m == name) since = s;
    const bool runs = !since.empty() && (version.empty() || compare_versions(parse_engine_version(version, o), parse_engine_version(since, o)) >= 0);
    if (!runs) {
        // The first release that runs it, from the later ranges.
        std::string first;
        for (const SpecEngineRange& later : engine == "vllm" ? catalog->vllm : catalog->sglang)
            for (const auto& [m, s] : later.methods)
                if (m == name && !s.empty() && first.empty() &&
                    (version.empty() || compare_versions(parse_engine_version(later.to.empty() ? s : later.to, o), parse_engine_version(version, o)) >= 0))
                    first = s;
        throw Error(o, std::string(name) + " speculative decoding does not run in " + std::string(engine) + " " + std::string(version) +
                           (first.empty() ? "" : " (it does from " + first + ")"));
    }
    if (r->max_k > 0 && spec.k > r->max_k)
        throw Error(o, "K " + std::to_string(spec.k) + " is above " + std::string(engine) + (version.empty() ? "" : " " + std::string(version)) + "'s limit of " +
                           std::to_string(r->max_k) + (r->max_k_where.empty() ? "" : " (" + r->max_k_where + ")"));
}

std::int64_t spec_lookahead_slots(std::string_view engine, SpecMethod method, std::int64_t k) {
    return engine == "vllm" && method != SpecMethod::Ngram ? k : 0;
}

std::int64_t spec_default_max_running(std::string_view engine, std::string_view version) {
    if (engine != "sglang") return 0;
    if (!version.empty()) {
        const EngineVersion v = parse_engine_version(version, "--engine");
        if (compare_versions(v, parse_engine_version("0.4.3.post3", "")) >= 0 && compare_versions(v, parse_engine_version("0.4.4.post3", "")) <= 0)
            return 32;
    }
    return 48;
}

DraftCost draft_cost(const SpecRequest& spec, const ModelConfig& m, const SchemeCosts& c, const ModelConfig* draft, const SchemeCosts* dc,
                     std::int64_t tp) {
    DraftCost r;
    const double h = d(m.hidden_size);
    const double q_dim = d(m.num_attention_heads) * d(m.head_dim);
    const double kv_dim = d(m.num_kv_heads) * d(m.head_dim);
    const double inter = d(m.intermediate_size > 0 ? m.intermediate_size : std::max(m.moe_intermediate_size, m.hidden_size * 4));
    const double vocab = d(m.vocab_size);
    const double t = d(tp);
    const std::int64_t layers = std::max<std::int64_t>(m.token_mixer_layers(), 1);
    // One cached token of one layer per GPU, in the target's KV format.
    const double kv_per_layer = d(c.kv_bytes_per_token) / d(layers) / t;
    switch (spec.method) {
        case SpecMethod::Eagle3:
        case SpecMethod::Eagle: {
            const bool three = spec.method == SpecMethod::Eagle3;
            // q/k/v over [embedding, hidden] (2h) for EAGLE-3, h for EAGLE; o; a SwiGLU MLP; the fc
            // that fuses three (EAGLE-3) or two (EAGLE) hidden-size vectors into one.
            const double params = (three ? 2 * h : h) * (q_dim + 2 * kv_dim) + q_dim * h + 3 * h * inter + (three ? 3 : 2) * h * h;
            r.layer_bytes = 2 * params / t;
            r.layer_flop_per_row = 2 * params / t;
            r.layers = 1;
            // EAGLE-3 carries its own lm_head over its draft vocabulary; EAGLE shares the target's.
            r.head_bytes = three ? 2 * vocab * h / t : 0;
            r.head_flop_per_row = 2 * vocab * h / t;
            r.weight_bytes = static_cast<std::uint64_t>(r.layer_bytes + r.head_bytes);
            r.kv_bytes_per_token = static_cast<std::uint64_t>(2 * kv_dim * 2 / t);  // K and V of one layer, bf16
            r.attention_share = 1.0 / d(layers);
            r.extend_forwards = 1;
            r.single_forwards = spec.k - 1;
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s head: 1 decoder layer + fc%s, bf16 (%.2f GiB per GPU)", three ? "EAGLE-3" : "EAGLE",
                          three ? " + its own lm_head" : ", the target's lm_head", d(r.weight_bytes) / 1073741824.0);
            r.description = buf;
            break;
        }
        case SpecMethod::Mtp: {
            // The model's MTP module: one decoder layer of the target (its share of the resident
            // linears, at the target's scheme), an fc over [embedding, hidden] in bf16, the
            // target's lm_head.
            const double body = d(c.resident_weight_bytes);
            const double embedding_and_head = d(m.vocab_size) * h * 2 * (m.tie_word_embeddings ? 1 : 2);
            const double per_layer = std::max(0.0, body - embedding_and_head) / d(std::max<std::int64_t>(m.num_layers, 1));
            const std::int64_t n = mtp_layers(m);
            r.layer_bytes = (per_layer + 2 * 2 * h * h) / t;
            // A token runs the layer's active parameters: the streamed (non-expert) share plus its
            // experts.
            const double active_per_layer = c.linear_flop_per_token / d(std::max<std::int64_t>(m.num_layers, 1));
            r.layer_flop_per_row = (active_per_layer + 2 * 2 * h * h) / t;
            r.layers = 1;
            r.head_bytes = 0;
            r.head_flop_per_row = 2 * d(m.vocab_size) * h / t;
            r.weight_bytes = static_cast<std::uint64_t>(d(n) * r.layer_bytes);
            r.kv_bytes_per_token = static_cast<std::uint64_t>(d(n) * kv_per_layer);
            r.attention_share = 1.0 / d(layers);
            r.extend_forwards = 1;
            r.single_forwards = spec.k - 1;
            char buf[160];
            std::snprintf(buf, sizeof buf, "MTP: %lld module%s of the model, 1 decoder layer each (%.2f GiB per GPU)", static_cast<long long>(n),
                          n == 1 ? "" : "s", d(r.weight_bytes) / 1073741824.0);
            r.description = buf;
            break;
        }
        case SpecMethod::Draft: {
            assert(draft && dc);
            r.runs_draft_model = true;
            r.weight_bytes = dc->resident_weight_bytes / static_cast<std::uint64_t>(tp);
            r.kv_bytes_per_token = dc->kv_bytes_per_token / static_cast<std::uint64_t>(tp);
            r.layers = draft->num_layers;
            r.extend_forwards = 1;
            r.single_forwards = spec.k - 1;
            char buf[200];
            std::snprintf(buf, sizeof buf, "draft model %s (%.2f GiB per GPU)", draft->name.c_str(), d(r.weight_bytes) / 1073741824.0);
            r.description = buf;
            break;
        }
        case SpecMethod::Ngram:
            r.description = "n-gram lookup in the prompt and the output, on the host (no draft weights)";
            break;
    }
    return r;
}

namespace {

SpecStep finish(SpecStep s, const Acceptance& a) {
    s.time_s = s.verify_s + s.draft_s + s.host_s;
    s.tokens_per_step = a.mean_length();
    s.tpot_s = s.time_s / s.tokens_per_step;
    s.plain_tpot_s = s.plain_s;
    s.speedup = s.tpot_s > 0 ? s.plain_tpot_s / s.tpot_s : 1.0;
    return s;
}

}  // namespace

SpecStep engine_spec_step(const StepLookups& k, const SchemeCosts& c, const ModelConfig& m, const GpuProfile& gpu, const EngineSetup& setup,
                          const Workload& w, std::int64_t batch, std::int64_t context, const SpecRequest& spec, const Acceptance& a,
                          const DraftCost& draft, const SpecTerms& terms, const DraftModelPricing* dm, std::int64_t disable_above_batch) {
    SpecStep s;
    const EngineStep plain = engine_decode_step(k, c, m, gpu, setup, w, batch, context);
    s.plain_s = plain.time_s;
    if (disable_above_batch > 0 && batch > disable_above_batch) {
        s.disabled = true;
        s.verify_s = s.plain_s;
        Acceptance none;
        return finish(s, none);
    }
    const EngineStep verify = engine_decode_step(k, c, m, gpu, setup, w, batch, context, spec.k + 1);
    // A verify step does all a decode step does and more: never faster (the fitted kernel curves can
    // price a GEMM of more rows faster than one of fewer, within their noise).
    s.verify_s = std::max(verify.time_s, s.plain_s);
    s.verify_eager = verify.eager;
    // The first draft pass runs over every token the step verified (vLLM from 0.11.0 keeps the
    // rejected positions; SGLang's draft-extend pads to K + 1 per request): B x (K + 1) rows.
    const std::int64_t extend_rows = batch * (spec.k + 1);
    const std::int64_t forwards = draft.extend_forwards + draft.single_forwards;
    if (draft.runs_draft_model && dm && dm->costs && dm->model) {
        // A draft forward runs inside the target's step: its kernels and per-layer costs, not the
        // step's fixed (scheduling, sampling) cost, which the fitted draft_forward_s stands for.
        const double fixed = setup.profile.step.fixed_step_s;
        const EngineStep first = engine_decode_step(dm->lookups, *dm->costs, *dm->model, gpu, setup, w, batch, context,
                                                    std::max<std::int64_t>(1, extend_rows / batch));
        const EngineStep single = engine_decode_step(dm->lookups, *dm->costs, *dm->model, gpu, setup, w, batch, context);
        const auto forward_s = [&](const EngineStep& e) { return std::max(0.0, e.time_s - fixed) + terms.draft_forward_s; };
        s.draft_s = d(draft.extend_forwards) * forward_s(first) + d(draft.single_forwards) * forward_s(single);
    } else if (forwards > 0) {
        const StepTerms& st = setup.profile.step;
        // The draft's layers read their own cache: the plain step's attention, per layer of the target.
        const auto forward_s = [&](std::int64_t rows) {
            const double layer = engine_kernel_time_s(draft.layer_bytes, draft.layer_flop_per_row * d(rows), rows, KernelFamily::Bf16Gemm, gpu,
                                                      k.head_curve);
            const double head = engine_kernel_time_s(draft.head_bytes, draft.head_flop_per_row * d(rows), rows, KernelFamily::Bf16Gemm, gpu,
                                                     k.head_curve);
            return terms.draft_forward_s + d(draft.layers) * st.per_layer_s + layer + head + plain.attention_s * draft.attention_share;
        };
        s.draft_s = d(draft.extend_forwards) * forward_s(extend_rows) + d(draft.single_forwards) * forward_s(batch);
    }
    s.host_s = d(batch) * (terms.host_per_sequence_s + (spec.method == SpecMethod::Ngram ? terms.ngram_per_sequence_s : 0.0));
    return finish(s, a);
}

SpecStep roofline_spec_step(const SchemeCosts& c, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w, std::int64_t batch,
                            std::int64_t context, const SpecRequest& spec, const Acceptance& a, const DraftCost& draft, const SchemeCosts* dc) {
    SpecStep s;
    s.plain_s = decode_step(c, gpu, eff, w, batch, context).time_s;
    s.verify_s = std::max(verify_step(c, gpu, eff, w, batch, spec.k + 1, context).time_s, s.plain_s);
    const std::int64_t extend_rows = batch * (spec.k + 1);
    if (draft.runs_draft_model && dc) {
        s.draft_s = d(draft.extend_forwards) * verify_step(*dc, gpu, eff, w, batch, std::max<std::int64_t>(1, extend_rows / batch), context).time_s +
                    d(draft.single_forwards) * decode_step(*dc, gpu, eff, w, batch, context).time_s;
    } else if (draft.extend_forwards + draft.single_forwards > 0) {
        const double bw = gpu.memory_bandwidth_bytes_per_s * eff.bandwidth_efficiency;
        const double rate = matmul_peak_flop_per_s(gpu, MatmulType::Bf16) * eff.compute_efficiency_for(MatmulType::Bf16);
        const double kv = d(batch) * kv_read_bytes_per_sequence(c, w.tensor_parallel, context) * draft.attention_share;
        const auto forward_s = [&](std::int64_t rows) {
            const double bytes = draft.layer_bytes + draft.head_bytes + kv;
            const double flop = (draft.layer_flop_per_row + draft.head_flop_per_row) * d(rows);
            return std::max(bytes / bw, rate > 0 ? flop / rate : 0.0);
        };
        s.draft_s = d(draft.extend_forwards) * forward_s(extend_rows) + d(draft.single_forwards) * forward_s(batch);
    }
    return finish(s, a);
}

}  // namespace quantplan::engine
