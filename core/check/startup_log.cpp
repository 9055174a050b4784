#include "core/check/startup_log.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <set>

#include "core/checkpoint/json_guard.h"
#include "core/error.h"

namespace quantplan::check {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr std::size_t kMaxLineChars = 300;
// A wrapped argument list is joined over at most this many lines, and a line kept to this length.
constexpr int kMaxJoinedLines = 200;
constexpr std::size_t kMaxJoinedLineChars = std::size_t{64} << 10;
// The regexes see at most this much of a line (libstdc++'s regex recurses per character).
constexpr std::size_t kMaxRegexChars = 4096;
constexpr std::size_t kMaxPrefixChars = 512;

// "464,848" -> 464848; "24.83" -> 24.83; nullopt for anything else.
std::optional<double> number(std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
    if (text.empty() || text.size() > 40) return std::nullopt;
    try {
        std::size_t pos = 0;
        const double v = std::stod(text, &pos);
        if (pos != text.size() || !std::isfinite(v)) return std::nullopt;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// A byte quantity printed with a unit. vLLM and SGLang print GiB (bytes / 2^30) also where the
// label says "GB" (vLLM V0's "Loading model weights took", SGLang's "avail mem"/"K size").
std::optional<LoggedQuantity> bytes_quantity(const std::string& value, const std::string& unit, const std::string& line, StartupLog& log) {
    const std::optional<double> v = number(value);
    if (!v) return std::nullopt;
    double factor = kGiB;
    if (unit == "MiB" || unit == "MB") factor = 1048576.0;
    if (unit == "GB" && std::find(log.notes.begin(), log.notes.end(), std::string("'GB' read as GiB (bytes / 2^30), as vLLM and SGLang compute it")) == log.notes.end())
        log.notes.push_back("'GB' read as GiB (bytes / 2^30), as vLLM and SGLang compute it");
    return LoggedQuantity{*v * factor, value + " " + unit, line.substr(0, kMaxLineChars)};
}

std::optional<LoggedQuantity> count_quantity(const std::string& value, const std::string& line) {
    const std::optional<double> v = number(value);
    if (!v) return std::nullopt;
    return LoggedQuantity{*v, value, line.substr(0, kMaxLineChars)};
}

// Keeps the first value of a quantity (the ranks of one engine log the same figure).
void keep_first(std::optional<LoggedQuantity>& slot, std::optional<LoggedQuantity> q) {
    if (!slot && q) slot = std::move(q);
}

// A key of a Python-style argument list: "max_model_len=16384", "'gpu_memory_utilization': 0.5",
// "tensor_parallel_size=2". Returns the raw value text (quotes removed) or "".
std::string argument(const std::string& line, const std::string& key) {
    for (const std::string& pattern : {key + "=", "'" + key + "': "}) {
        std::size_t at = 0;
        while ((at = line.find(pattern, at)) != std::string::npos) {
            // A whole key: not the tail of a longer name.
            const bool whole = at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_');
            at += pattern.size();
            if (!whole) continue;
            std::size_t end = at;
            if (end < line.size() && (line[end] == '\'' || line[end] == '"')) {
                const char quote = line[end];
                const std::size_t close = line.find(quote, end + 1);
                return close == std::string::npos ? "" : line.substr(end + 1, close - end - 1);
            }
            while (end < line.size() && line[end] != ',' && line[end] != ')' && line[end] != '}' && line[end] != ' ') ++end;
            return line.substr(at, end - at);
        }
    }
    return "";
}

std::optional<std::int64_t> integer_argument(const std::string& line, const std::string& key) {
    const std::optional<double> v = number(argument(line, key));
    if (!v || *v < 0 || *v > 1e12) return std::nullopt;
    return static_cast<std::int64_t>(*v);
}

std::optional<double> real_argument(const std::string& line, const std::string& key) { return number(argument(line, key)); }

std::optional<bool> flag_argument(const std::string& line, const std::string& key) {
    const std::string v = argument(line, key);
    if (v == "True" || v == "true") return true;
    if (v == "False" || v == "false") return false;
    return std::nullopt;
}

void set_text(std::optional<std::string>& slot, const std::string& value) {
    if (!value.empty() && value != "None" && !slot) slot = value;
}

}  // namespace

std::string clean_log_line(std::string_view raw) {
    // Prefixes sit in the first characters; the regex sees only those (libstdc++'s regex recurses
    // once per character and would overflow the stack on a long line).
    static const std::regex prefixes(
        "^(\\s*\\([A-Za-z_][A-Za-z0-9_ ]*pid=[0-9]+(, ip=[0-9.:a-fA-F]+)?\\)\\s*|\\s*\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}[^\\]]{0,40}\\]\\s*|"
        "\\s*(INFO|WARNING|DEBUG|ERROR|CRITICAL) [0-9]{2}-[0-9]{2} [0-9:]{8}(\\.[0-9]+)? (\\[[^\\]]{0,120}\\]|[A-Za-z0-9_./-]{1,120}:[0-9]+\\])\\s*){1,6}");
    std::string line;
    line.reserve(std::min<std::size_t>(raw.size(), kMaxJoinedLineChars));
    // ANSI colour codes: ESC [ digits/semicolons letter.
    for (std::size_t i = 0; i < raw.size() && line.size() < kMaxJoinedLineChars; ++i) {
        if (raw[i] == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
            std::size_t j = i + 2;
            while (j < raw.size() && j - i < 16 && (std::isdigit(static_cast<unsigned char>(raw[j])) || raw[j] == ';')) ++j;
            if (j < raw.size() && std::isalpha(static_cast<unsigned char>(raw[j]))) {
                i = j;
                continue;
            }
        }
        line += raw[i];
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string head = line.substr(0, kMaxPrefixChars);
    std::smatch m;
    if (std::regex_search(head, m, prefixes) && m.position(0) == 0) line.erase(0, static_cast<std::size_t>(m.length(0)));
    return line;
}

StartupLog read_startup_log(std::string_view text, const std::string& source) {
    if (text.size() > kMaxLogBytes) throw Error("--check", source + " is larger than " + std::to_string(kMaxLogBytes >> 20) + " MiB; pass the startup part of the log");
    StartupLog log;
    static const std::regex version_line("vLLM API server version ([0-9][0-9A-Za-z.+]*)");
    static const std::regex init_line("Initializing a(n)? (V1 )?LLM engine \\(v([0-9][0-9A-Za-z.+]*)\\) with config");
    static const std::regex model_loading("Model loading took ([0-9.]+) ?(GiB|GB)");
    static const std::regex v0_weights("Loading model weights took ([0-9.]+) ?(GiB|GB)");
    static const std::regex breakdown("model weights take ([0-9.]+) ?(GiB|GB); non_torch_memory takes ([0-9.]+) ?(GiB|GB); PyTorch activation peak memory takes ([0-9.]+) ?(GiB|GB); the rest of the memory reserved for KV Cache is ([0-9.]+) ?(GiB|GB)");
    static const std::regex profiling("total_gpu_memory=([0-9.]+)(GiB|GB).*non_torch_memory=([0-9.]+)(GiB|GB).*kv_cache_size=([0-9.]+)(GiB|GB)");
    static const std::regex blocks("(^|# )(GPU|CUDA) blocks: ([0-9,]+)");
    static const std::regex available("Available KV cache memory: ([0-9.]+) ?(GiB|GB)");
    static const std::regex kv_tokens("GPU KV cache size: ([0-9,]+) tokens");
    static const std::regex concurrency("Maximum concurrency for ([0-9,]+) tokens per request: ([0-9.,]+)x");
    static const std::regex graphs("Graph capturing finished in [0-9.]+ secs?, took (-?[0-9.]+) ?(GiB|GB)");
    static const std::regex free_memory("Free memory on device \\(([0-9.]+)/([0-9.]+) GiB\\) on startup.*Actual usage is ([0-9.]+) GiB for weight, ([0-9.]+) GiB for peak activation, ([0-9.]+) GiB for non-torch memory, and ([0-9.]+) GiB for CUDAGraph memory");
    static const std::regex too_long("larger than the maximum number of tokens that can be stored in KV cache \\(([0-9,]+)\\)");
    static const std::regex sglang_kv("KV Cache is allocated\\. #tokens: ([0-9,]+), K size: ([0-9.]+) (GB|GiB), V size: ([0-9.]+) (GB|GiB)");
    static const std::regex sglang_weights("Load weight end\\..*mem usage=([0-9.]+) (GB|GiB)");
    static const std::regex sglang_rank("\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} (TP[0-9]+)\\]");
    static const std::regex max_total("max_total_num_tokens=([0-9,]+)");
    std::set<std::string> kv_ranks;
    bool recognised = false;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view raw = text.substr(start, end - start);
        start = end + 1;
        if (raw.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        if (raw.find('\0') != std::string_view::npos) throw Error("--check", source + " holds NUL bytes: not a text log");
        std::string line = clean_log_line(raw);
        // An argument list wrapped over several lines (logs pasted or hard-wrapped at a width): the
        // lines that follow are joined, as they are, until its brackets close.
        if (line.find("non-default args:") != std::string::npos || line.find("with config:") != std::string::npos ||
            line.find("server_args=ServerArgs(") != std::string::npos) {
            const auto open_brackets = [](const std::string& l) {
                long depth = 0;
                for (char c : l) depth += (c == '{' || c == '(' || c == '[') ? 1 : (c == '}' || c == ')' || c == ']') ? -1 : 0;
                return depth;
            };
            for (int joined = 0; open_brackets(line) > 0 && joined < kMaxJoinedLines && start < text.size() && line.size() < kMaxJoinedLineChars; ++joined) {
                std::size_t next_end = text.find('\n', start);
                if (next_end == std::string_view::npos) next_end = text.size();
                std::string next(text.substr(start, next_end - start));
                if (!next.empty() && next.back() == '\r') next.pop_back();
                start = next_end + 1;
                line += next.substr(0, kMaxJoinedLineChars - std::min(line.size(), kMaxJoinedLineChars));
            }
        }
        // The regexes read the line's head; argument lists are read by find on the whole line.
        const std::string full = line;
        line = full.substr(0, kMaxRegexChars);
        std::smatch m;
        if (line.find("vLLM API server version") != std::string::npos && std::regex_search(line, m, version_line)) {
            log.engine = "vllm", recognised = true;
            if (log.version.empty()) log.version = m[1];
        }
        if (line.find("LLM engine (v") != std::string::npos && std::regex_search(line, m, init_line)) {
            log.engine = "vllm", recognised = true;
            if (log.version.empty()) log.version = m[3];
            if (log.engine_generation.empty()) log.engine_generation = m[2].matched ? "v1" : "v0";
            if (log.model.empty()) log.model = argument(full, "model");
            set_text(log.dtype, argument(full, "dtype"));
            set_text(log.quantization, argument(full, "quantization"));
            set_text(log.kv_cache_dtype, argument(full, "kv_cache_dtype"));
            if (!log.max_model_len) log.max_model_len = integer_argument(full, "max_seq_len");
            if (!log.tensor_parallel) log.tensor_parallel = integer_argument(full, "tensor_parallel_size");
            if (!log.enforce_eager) log.enforce_eager = flag_argument(full, "enforce_eager");
            if (!log.block_size_tokens) log.block_size_tokens = integer_argument(full, "block_size");
            if (!log.chunked_prefill) log.chunked_prefill = flag_argument(full, "enable_chunked_prefill");
        }
        if (line.find("non-default args:") != std::string::npos) {
            log.engine = log.engine.empty() ? "vllm" : log.engine, recognised = true;
            if (log.model.empty()) log.model = argument(full, "model");
            if (!log.gpu_memory_utilization) log.gpu_memory_utilization = real_argument(full, "gpu_memory_utilization");
            if (!log.max_model_len) log.max_model_len = integer_argument(full, "max_model_len");
            if (!log.tensor_parallel) log.tensor_parallel = integer_argument(full, "tensor_parallel_size");
            if (!log.max_num_seqs) log.max_num_seqs = integer_argument(full, "max_num_seqs");
            if (!log.max_num_batched_tokens) log.max_num_batched_tokens = integer_argument(full, "max_num_batched_tokens");
            if (!log.enforce_eager) log.enforce_eager = flag_argument(full, "enforce_eager");
            set_text(log.kv_cache_dtype, argument(full, "kv_cache_dtype"));
            set_text(log.quantization, argument(full, "quantization"));
        }
        if (line.find("server_args=ServerArgs(") != std::string::npos) {
            log.engine = "sglang", recognised = true;
            if (log.model.empty()) log.model = argument(full, "model_path");
            if (!log.tensor_parallel) log.tensor_parallel = integer_argument(full, "tp_size");
            if (!log.mem_fraction_static) log.mem_fraction_static = real_argument(full, "mem_fraction_static");
            if (!log.max_model_len) log.max_model_len = integer_argument(full, "context_length");
            set_text(log.dtype, argument(full, "dtype"));
            set_text(log.quantization, argument(full, "quantization"));
            set_text(log.kv_cache_dtype, argument(full, "kv_cache_dtype"));
            if (!log.max_num_seqs) log.max_num_seqs = integer_argument(full, "max_running_requests");
            if (!log.max_num_batched_tokens) log.max_num_batched_tokens = integer_argument(full, "chunked_prefill_size");
            if (!log.enforce_eager) log.enforce_eager = flag_argument(full, "disable_cuda_graph");
        }
        if (line.find("took") != std::string::npos) {
            if (std::regex_search(line, m, model_loading)) keep_first(log.weights_bytes, bytes_quantity(m[1], m[2], line, log)), recognised = true;
            else if (std::regex_search(line, m, v0_weights)) keep_first(log.weights_bytes, bytes_quantity(m[1], m[2], line, log)), recognised = true;
            if (std::regex_search(line, m, graphs)) keep_first(log.cuda_graph_bytes, bytes_quantity(m[1], m[2], line, log)), recognised = true;
        }
        if (line.find("model weights take") != std::string::npos && std::regex_search(line, m, breakdown)) {
            recognised = true;
            keep_first(log.weights_bytes, bytes_quantity(m[1], m[2], line, log));
            keep_first(log.non_torch_bytes, bytes_quantity(m[3], m[4], line, log));
            keep_first(log.activation_peak_bytes, bytes_quantity(m[5], m[6], line, log));
            keep_first(log.kv_cache_bytes, bytes_quantity(m[7], m[8], line, log));
        }
        if (line.find("Memory profiling results") != std::string::npos && std::regex_search(line, m, profiling)) {
            recognised = true;
            keep_first(log.total_memory_bytes, bytes_quantity(m[1], m[2], line, log));
            keep_first(log.non_torch_bytes, bytes_quantity(m[3], m[4], line, log));
            keep_first(log.kv_cache_bytes, bytes_quantity(m[5], m[6], line, log));
            if (!log.gpu_memory_utilization) log.gpu_memory_utilization = real_argument(full, "gpu_memory_utilization");
        }
        if (line.find(" blocks: ") != std::string::npos && std::regex_search(line, m, blocks))
            keep_first(log.gpu_blocks, count_quantity(m[3], line)), recognised = true;
        if (line.find("Available KV cache memory") != std::string::npos && std::regex_search(line, m, available))
            keep_first(log.kv_cache_bytes, bytes_quantity(m[1], m[2], line, log)), recognised = true;
        if (line.find("GPU KV cache size") != std::string::npos && std::regex_search(line, m, kv_tokens))
            keep_first(log.kv_cache_tokens, count_quantity(m[1], line)), recognised = true;
        if (line.find("Maximum concurrency") != std::string::npos && std::regex_search(line, m, concurrency)) {
            keep_first(log.max_concurrency, count_quantity(m[2], line)), recognised = true;
            if (const std::optional<double> n = number(m[1]); !log.max_concurrency_tokens && n && *n >= 1 && *n <= 1e9)
                log.max_concurrency_tokens = static_cast<std::int64_t>(*n);
        }
        if (line.find("Free memory on device") != std::string::npos && std::regex_search(line, m, free_memory)) {
            recognised = true;
            keep_first(log.total_memory_bytes, bytes_quantity(m[2], "GiB", line, log));
            keep_first(log.weights_bytes, bytes_quantity(m[3], "GiB", line, log));
            keep_first(log.activation_peak_bytes, bytes_quantity(m[4], "GiB", line, log));
            keep_first(log.non_torch_bytes, bytes_quantity(m[5], "GiB", line, log));
            keep_first(log.cuda_graph_bytes, bytes_quantity(m[6], "GiB", line, log));
        }
        if (line.find("stored in KV cache") != std::string::npos && std::regex_search(line, m, too_long)) {
            keep_first(log.kv_cache_tokens, count_quantity(m[1], line)), recognised = true;
            log.notes.push_back("the KV-cache size comes from the max-model-len error, not from a size line");
        }
        if (line.find("KV Cache is allocated") != std::string::npos && std::regex_search(line, m, sglang_kv)) {
            log.engine = "sglang", recognised = true;
            keep_first(log.kv_cache_tokens, count_quantity(m[1], line));
            const std::optional<double> k = number(m[2]), v = number(m[4]);
            if (k && v && !log.kv_cache_bytes)
                log.kv_cache_bytes = LoggedQuantity{(*k + *v) * kGiB, m[2].str() + " + " + m[4].str() + " " + m[3].str(), line.substr(0, kMaxLineChars)};
            std::smatch rank;
            const std::string raw_line(raw);
            if (std::regex_search(raw_line, rank, sglang_rank)) kv_ranks.insert(rank[1]);
        }
        if (line.find("Load weight end") != std::string::npos && std::regex_search(line, m, sglang_weights))
            keep_first(log.weights_bytes, bytes_quantity(m[1], m[2], line, log)), log.engine = "sglang", recognised = true;
        if (line.find("max_total_num_tokens=") != std::string::npos && std::regex_search(line, m, max_total))
            keep_first(log.kv_cache_tokens, count_quantity(m[1], line)), recognised = true;
    }
    if (!recognised)
        throw Error("--check", source + " is not a vLLM or SGLang startup log: expected lines such as 'Initializing a V1 LLM engine (v...) with "
                               "config', 'GPU KV cache size: N tokens', '# GPU blocks: N' or 'KV Cache is allocated. #tokens: N'");
    if (log.engine.empty()) log.engine = "vllm";
    if (log.engine == "vllm" && log.engine_generation.empty() && !log.version.empty())
        log.engine_generation = log.kv_cache_tokens && log.kv_cache_tokens->line.find("GPU KV cache size") != std::string::npos ? "v1" : "";
    if (log.engine == "vllm" && log.engine_generation.empty())
        log.engine_generation = log.gpu_blocks ? "v0" : (log.kv_cache_tokens ? "v1" : "");
    log.ranks_seen = std::max<std::int64_t>(1, static_cast<std::int64_t>(kv_ranks.size()));
    if (log.ranks_seen > 1) log.notes.push_back(std::to_string(log.ranks_seen) + " ranks logged the KV cache; the first rank's figures are used");
    // A V0 GPU block is 16 tokens unless configured otherwise: the block count gives tokens.
    return log;
}

}  // namespace quantplan::check
