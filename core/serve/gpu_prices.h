#pragma once
// The bundled on-demand GPU prices (assets/prices/gpu-prices.json): every figure found, with its
// provider, offering, source and date, and one marked default per GPU, which --serve prices a GPU
// with unless --price gives one (docs/capacity.md).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace quantplan::serve {

// One price as its source states it, per GPU-hour.
struct GpuPrice {
    std::string gpu;                     // quantplan's GPU id (assets/gpus/<id>.json)
    double usd_per_gpu_hour = 0;
    bool is_default = false;             // the one --serve uses for this GPU
    std::string provider, offering, source;
    std::optional<std::string> date;     // YYYY-MM-DD the source gives; none when it gives none
};

// All prices of the file's text, in file order. Throws Error("<path>: prices[i].<key>") for a
// missing or malformed field, a price not above 0, or two defaults for one GPU.
std::vector<GpuPrice> parse_gpu_prices(const std::string& json_text, const std::string& path);

// The default price of each GPU that has one.
std::map<std::string, GpuPrice> default_gpu_prices(const std::vector<GpuPrice>& prices);

}  // namespace quantplan::serve
