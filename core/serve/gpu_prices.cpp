#include "core/serve/gpu_prices.h"

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace quantplan::serve {

std::vector<GpuPrice> parse_gpu_prices(const std::string& text, const std::string& path) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw Error(path, std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object() || !doc.contains("prices") || !doc["prices"].is_array()) throw Error(path + ": prices", "must be an array");
    std::vector<GpuPrice> out;
    std::map<std::string, bool> has_default;
    for (std::size_t i = 0; i < doc["prices"].size(); ++i) {
        const nlohmann::json& e = doc["prices"][i];
        const std::string where = path + ": prices[" + std::to_string(i) + "]";
        if (!e.is_object()) throw Error(where, "must be an object");
        const auto text_of = [&](const char* key) {
            if (!e.contains(key) || !e[key].is_string() || e[key].get<std::string>().empty()) throw Error(where + "." + key, "must be a non-empty string");
            return e[key].get<std::string>();
        };
        GpuPrice p;
        p.gpu = text_of("gpu");
        p.provider = text_of("provider");
        p.offering = text_of("offering");
        p.source = text_of("source");
        if (!e.contains("usd_per_gpu_hour") || !e["usd_per_gpu_hour"].is_number() || !(e["usd_per_gpu_hour"].get<double>() > 0))
            throw Error(where + ".usd_per_gpu_hour", "must be a number above 0");
        p.usd_per_gpu_hour = e["usd_per_gpu_hour"].get<double>();
        if (!e.contains("default") || !e["default"].is_boolean()) throw Error(where + ".default", "must be true or false");
        p.is_default = e["default"].get<bool>();
        if (e.contains("date") && !e["date"].is_null()) {
            if (!e["date"].is_string() || e["date"].get<std::string>().size() != 10) throw Error(where + ".date", "must be YYYY-MM-DD or null");
            p.date = e["date"].get<std::string>();
        }
        if (p.is_default && has_default[p.gpu]) throw Error(where + ".default", "a second default price for " + p.gpu);
        has_default[p.gpu] = has_default[p.gpu] || p.is_default;
        out.push_back(std::move(p));
    }
    return out;
}

std::map<std::string, GpuPrice> default_gpu_prices(const std::vector<GpuPrice>& prices) {
    std::map<std::string, GpuPrice> out;
    for (const GpuPrice& p : prices)
        if (p.is_default) out[p.gpu] = p;
    return out;
}

}  // namespace quantplan::serve
