#include "core/check/startup_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include "core/base/error.h"

namespace quantplan::check {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr std::size_t kMaxLineChars = 300;
// A wrapped argument list (or a command line continued with '\') is joined over at most this many
// lines, up to kMaxLineBytes.
constexpr int kMaxJoinedLines = 200;
// The regexes see at most this much of a line (libstdc++'s regex recurses per character).
constexpr std::size_t kMaxRegexChars = 4096;
constexpr std::size_t kMaxPrefixChars = 512;
// Entries of one argument list read at most (a Namespace has about 150).
constexpr std::size_t kMaxEntries = 2000;

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string trim(std::string_view s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return std::string(s.substr(a, b - a));
}

// The GPU name of a system description's value: "2x RTX 4090 (24GB each)" -> "RTX 4090"; the
// count before it, a bracketed note and anything after a comma or a semicolon are dropped.
std::string spec_gpu_name(std::string v) {
    if (const std::size_t cut = v.find_first_of(",;(["); cut != std::string::npos) v.resize(cut);
    std::string t = trim(v);
    std::size_t i = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (i > 0 && i < t.size()) {
        std::size_t j = i;
        while (j < t.size() && t[j] == ' ') ++j;
        if (j < t.size() && (t[j] == 'x' || t[j] == 'X' || t[j] == '*') && j + 1 < t.size() && t[j + 1] == ' ') t = t.substr(j + 2);
        else if (j < t.size() && (t[j] == 'x' || t[j] == 'X') && j == i) t = t.substr(j + 1);
    }
    return trim(t);
}

// The trimmed text of a Markdown table row's cell `index` (0 for the first after the leading '|'),
// without backticks; empty when the row has fewer cells.
std::string table_cell_at(const std::string& row, std::size_t index) {
    std::size_t at = row.find('|');
    for (std::size_t i = 0; at != std::string::npos && i < index; ++i) at = row.find('|', at + 1);
    if (at == std::string::npos) return {};
    const std::size_t end = row.find('|', at + 1);
    if (end == std::string::npos) return {};
    std::string cell = row.substr(at + 1, end - at - 1);
    std::erase(cell, '`');
    return trim(cell);
}

// A Markdown table's separator row: every cell dashes, with an alignment colon at either end
// ("| ---- |", "|:-:|--|").
bool is_table_separator(const std::string& row) {
    static const std::regex dashes("^:?-+:?$");
    int cells = 0;
    for (std::size_t i = 0; i < 64; ++i) {
        const std::string cell = table_cell_at(row, i);
        if (cell.empty()) return cells > 0 && table_cell_at(row, i + 1).empty();
        if (!std::regex_search(cell, dashes)) return false;
        ++cells;
    }
    return false;
}

std::string unquote(std::string v) {
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return v.substr(1, v.size() - 2);
    return v;
}

// "464,848" -> 464848; "24.83" -> 24.83; nullopt for anything else (infinities and NaN included).
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

// An integer setting: a whole number, or with vLLM's human_readable_int suffixes (vLLM 0.10 on)
// k/m/g/t (powers of 1000) or K/M/G/T (powers of 1024): "32k" = 32000, "128K" = 131072. Looser
// than vLLM's parser where a log could not hold what it refuses (a value vLLM rejects never reaches
// a running engine's log): a whole-valued "4.0" or "1e9" is taken, a fractional result is not.
std::optional<double> integer_value(std::string text) {
    if (text.empty()) return std::nullopt;
    double scale = 1;
    switch (text.back()) {
        case 'k': scale = 1e3; break;
        case 'm': scale = 1e6; break;
        case 'g': scale = 1e9; break;
        case 't': scale = 1e12; break;
        case 'K': scale = 1024.0; break;
        case 'M': scale = 1048576.0; break;
        case 'G': scale = 1073741824.0; break;
        case 'T': scale = 1099511627776.0; break;
        default: break;
    }
    if (scale != 1) text.pop_back();
    const std::optional<double> v = number(text);
    if (!v) return std::nullopt;
    const double x = *v * scale;
    if (x != std::floor(x)) return std::nullopt;
    return x;
}

// A byte quantity printed with a unit. vLLM and SGLang print GiB (bytes / 2^30) also where the
// label says "GB" (vLLM V0's "Loading model weights took", SGLang's "avail mem"/"K size").
constexpr const char* kGbNote = "'GB' read as GiB (bytes / 2^30), as vLLM and SGLang compute it";

std::optional<LoggedQuantity> bytes_quantity(const std::string& value, const std::string& unit, const std::string& line, StartupLog& log) {
    const std::optional<double> v = number(value);
    if (!v) return std::nullopt;
    double factor = kGiB;
    if (unit == "MiB" || unit == "MB") factor = 1048576.0;
    if (unit == "GB" && std::find(log.notes.begin(), log.notes.end(), kGbNote) == log.notes.end()) log.notes.push_back(kGbNote);
    return LoggedQuantity{*v * factor, value + " " + unit, line.substr(0, kMaxLineChars)};
}

std::optional<LoggedQuantity> count_quantity(std::string value, const std::string& line) {
    while (!value.empty() && value.back() == ',') value.pop_back();  // "# GPU blocks: 2358, # CPU blocks" captures the comma
    const std::optional<double> v = number(value);
    if (!v) return std::nullopt;
    return LoggedQuantity{*v, value, line.substr(0, kMaxLineChars)};
}

// Keeps the first value of a quantity (the ranks of one engine log the same figure).
void keep_first(std::optional<LoggedQuantity>& slot, std::optional<LoggedQuantity> q) {
    if (!slot && q) slot = std::move(q);
}

// ---- Settings -------------------------------------------------------------------------------

// How much a form is trusted: the engine's own parse of its arguments over the engine's config
// line and its effective-value lines, over a command line pasted above the log.
int form_rank(const std::string& form) {
    if (form == "args: Namespace" || form == "non-default args" || form == "ServerArgs") return 3;
    if (form == "engine config" || form == "engine line") return 2;
    if (form == "description") return 0;  // a person's "MODEL: X" above the log: any other form replaces it
    return 1;  // "command line"
}

// The canonical (vLLM) name of a setting as one of the forms spells it; "" for a key not read.
// A leading '!' marks a negated flag (SGLang's disable_radix_cache is not enable_prefix_caching).
std::string canonical_key(std::string key) {
    while (!key.empty() && key.front() == '-') key.erase(0, 1);
    std::replace(key.begin(), key.end(), '-', '_');
    static const std::array<std::pair<const char*, const char*>, 44> aliases = {{
        {"model", "model"},
        {"model_path", "model"},
        {"gpu_memory_utilization", "gpu_memory_utilization"},
        {"mem_fraction_static", "mem_fraction_static"},
        {"max_model_len", "max_model_len"},
        {"max_seq_len", "max_model_len"},        // the engine config line's name
        {"context_length", "max_model_len"},     // SGLang
        {"kv_cache_dtype", "kv_cache_dtype"},
        {"quantization", "quantization"},
        {"q", "quantization"},
        {"tensor_parallel_size", "tensor_parallel_size"},
        {"tp", "tensor_parallel_size"},
        {"tp_size", "tensor_parallel_size"},
        {"pipeline_parallel_size", "pipeline_parallel_size"},
        {"pp", "pipeline_parallel_size"},
        {"pp_size", "pipeline_parallel_size"},
        {"data_parallel_size", "data_parallel_size"},
        {"dp", "data_parallel_size"},
        {"dp_size", "data_parallel_size"},
        {"dtype", "dtype"},
        {"enforce_eager", "enforce_eager"},
        {"disable_cuda_graph", "enforce_eager"},  // SGLang: no graphs is eager for the memory budget
        {"max_num_seqs", "max_num_seqs"},
        {"max_running_requests", "max_num_seqs"},
        {"max_num_batched_tokens", "max_num_batched_tokens"},
        {"chunked_prefill_size", "chunked_prefill_size"},
        {"max_prefill_tokens", "max_prefill_tokens"},
        {"block_size", "block_size"},
        {"page_size", "block_size"},
        {"enable_prefix_caching", "enable_prefix_caching"},
        {"no_enable_prefix_caching", "!enable_prefix_caching"},
        {"disable_radix_cache", "!enable_prefix_caching"},
        {"enable_chunked_prefill", "enable_chunked_prefill"},
        {"no_enable_chunked_prefill", "!enable_chunked_prefill"},
        {"chunked_prefill_enabled", "enable_chunked_prefill"},
        {"cpu_offload_gb", "cpu_offload_gb"},
        {"kv_cache_memory_bytes", "kv_cache_memory_bytes"},
        {"speculative_config", "speculative_config"},
        {"speculative_model", "speculative_config"},
        {"speculative_algorithm", "speculative_config"},
        {"num_speculative_tokens", "num_speculative_tokens"},
        {"speculative_num_steps", "num_speculative_tokens"},  // SGLang: K with topk 1
        {"speculative_eagle_topk", "speculative_eagle_topk"},
        {"served_model_name", "served_model_name"},
    }};
    for (const auto& [from, to] : aliases)
        if (key == from) return to;
    return "";
}

// The top-level entries of a Python repr or dict body ("a=1, b='x', c={...}" or "'a': 1, ..."),
// commas inside quotes and brackets kept; stops at the bracket that closes the list.
std::vector<std::pair<std::string, std::string>> python_entries(std::string_view body) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t start = 0;
    int depth = 0;
    char quote = 0;
    const auto emit = [&](std::size_t end) {
        const std::string_view entry = body.substr(start, end - start);
        int d = 0;
        char q = 0;
        for (std::size_t i = 0; i < entry.size(); ++i) {
            const char c = entry[i];
            if (q) {
                if (c == q) q = 0;
                continue;
            }
            if (c == '\'' || c == '"') q = c;
            else if (c == '(' || c == '[' || c == '{') ++d;
            else if (c == ')' || c == ']' || c == '}') --d;
            else if (d == 0 && (c == '=' || c == ':')) {
                std::string k = trim(entry.substr(0, i));
                if (k.starts_with("...")) k = trim(std::string_view(k).substr(3));  // a pasted line's elision before the key
                std::string key = unquote(k);
                std::string value = unquote(trim(entry.substr(i + 1)));
                if (!key.empty() && key.size() < 80 && out.size() < kMaxEntries) out.emplace_back(std::move(key), std::move(value));
                return;
            }
        }
    };
    for (std::size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (quote) {
            if (c == '\\') ++i;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == '(' || c == '[' || c == '{') ++depth;
        else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0) {
                emit(i);
                return out;
            }
            --depth;
        } else if (c == ',' && depth == 0) {
            emit(i);
            start = i + 1;
        }
    }
    emit(body.size());
    return out;
}

// A command line split as a shell would (quotes grouped, backslash-newlines already joined).
std::vector<std::string> shell_words(std::string_view s) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : s) {
        if (quote) {
            if (c == quote) quote = 0;
            else word += c;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c, in_word = true;
        } else if (std::isspace(static_cast<unsigned char>(c)) || c == '\\') {
            if (in_word) out.push_back(word), word.clear(), in_word = false;
        } else {
            word += c, in_word = true;
        }
        if (out.size() >= kMaxEntries) break;
    }
    if (in_word) out.push_back(word);
    return out;
}

struct Domain {
    const char* key;
    enum Kind { Real, Integer, Flag, Name, Text } kind;
    double low, high;     // Real: (low, high]; Integer: [low, high]
    const char* text;     // how the note names the domain
};

constexpr std::array<Domain, 20> kDomains = {{
    {"gpu_memory_utilization", Domain::Real, 0, 1, "a fraction in (0, 1]"},
    {"mem_fraction_static", Domain::Real, 0, 1, "a fraction in (0, 1]"},
    {"max_model_len", Domain::Integer, 1, 1e8, "a token count from 1"},
    {"tensor_parallel_size", Domain::Integer, 1, 1024, "an integer from 1 to 1024"},
    {"pipeline_parallel_size", Domain::Integer, 1, 1024, "an integer from 1 to 1024"},
    {"data_parallel_size", Domain::Integer, 1, 1024, "an integer from 1 to 1024"},
    {"max_num_seqs", Domain::Integer, 1, 1e7, "an integer from 1"},
    {"max_num_batched_tokens", Domain::Integer, 1, 1e9, "a token count from 1"},
    {"chunked_prefill_size", Domain::Integer, -1, 1e9, "a token count from 1, or -1 (no chunking)"},
    {"max_prefill_tokens", Domain::Integer, 1, 1e9, "a token count from 1"},
    {"block_size", Domain::Integer, 1, 4096, "a token count from 1 to 4096"},
    {"cpu_offload_gb", Domain::Real, -1e-300, 1e6, "a size in GB from 0"},
    {"kv_cache_memory_bytes", Domain::Integer, 1, 1e15, "a byte count from 1"},
    {"enforce_eager", Domain::Flag, 0, 0, "True or False"},
    {"enable_prefix_caching", Domain::Flag, 0, 0, "True or False"},
    {"enable_chunked_prefill", Domain::Flag, 0, 0, "True or False"},
    {"kv_cache_dtype", Domain::Name, 0, 0, "a dtype name"},
    {"quantization", Domain::Name, 0, 0, "a method name"},
    {"num_speculative_tokens", Domain::Integer, 1, 1024, "an integer from 1 to 1024"},
    {"speculative_eagle_topk", Domain::Integer, 1, 1024, "an integer from 1 to 1024"},
}};

std::optional<bool> flag_value(const std::string& v) {
    if (v == "True" || v == "true" || v == "1") return true;
    if (v == "False" || v == "false" || v == "0") return false;
    return std::nullopt;
}

bool is_name(const std::string& v) {
    if (v.empty() || v.size() > 64) return false;
    for (char c : v)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
    return true;
}

// ---- Lines ----------------------------------------------------------------------------------

// Where lines come from: a text in memory or a stream read in bounded chunks.
class LineSource {
public:
    virtual ~LineSource() = default;
    // The next line (without its newline, cut to kMaxLineBytes); false at the end. `nul` is set
    // when the line held a NUL byte.
    virtual bool next(std::string& line, bool& nul) = 0;
    bool ended_mid_line = false;  // the last line had no newline
};

class ViewLines : public LineSource {
public:
    explicit ViewLines(std::string_view text) : text_(text) {}
    bool next(std::string& line, bool& nul) override {
        if (pos_ >= text_.size()) return false;
        std::size_t end = text_.find('\n', pos_);
        if (end == std::string_view::npos) end = text_.size(), ended_mid_line = true;
        const std::string_view raw = text_.substr(pos_, end - pos_);
        nul = raw.find('\0') != std::string_view::npos;
        line.assign(raw.substr(0, kMaxLineBytes));
        pos_ = end + 1;
        return true;
    }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
};

class StreamLines : public LineSource {
public:
    explicit StreamLines(std::istream& in) : in_(in), buffer_(std::size_t{1} << 20) {}
    bool next(std::string& line, bool& nul) override {
        line.clear();
        nul = false;
        bool any = false;
        for (;;) {
            if (pos_ == size_) {
                if (!in_) break;
                in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
                size_ = static_cast<std::size_t>(in_.gcount());
                pos_ = 0;
                if (size_ == 0) break;
            }
            any = true;
            const char* begin = buffer_.data() + pos_;
            const void* found = std::memchr(begin, '\n', size_ - pos_);
            const std::size_t n = found ? static_cast<std::size_t>(static_cast<const char*>(found) - begin) : size_ - pos_;
            if (std::memchr(begin, '\0', n)) nul = true;
            if (line.size() < kMaxLineBytes) line.append(begin, std::min(n, kMaxLineBytes - line.size()));
            pos_ += n;
            if (found) {
                ++pos_;
                return true;
            }
        }
        if (any) ended_mid_line = true;
        return any;
    }

private:
    std::istream& in_;
    std::vector<char> buffer_;
    std::size_t pos_ = 0, size_ = 0;
};

// Substrings one of which every line the reader uses holds: other lines are passed over before
// any regex runs (a log of a long-running server is mostly request lines).
constexpr std::array<std::string_view, 49> kTriggers = {
    "version",  "Version",          "Namespace(",       "non-default args", "with config",      "ServerArgs(",      "took",
    "take",     "total_gpu_memory", "blocks:",          "KV cache",         "KV Cache",         "Maximum concurrency",
    "Free memory on device",        "Load weight",      "max_total_num_tokens",                 "capac",            "vllm serve",
    "vllm.entrypoints",             "launch_server",    "sglang serve",     "NVIDIA",           "Tesla",            "AMD Instinct",
    "Quadro",   "GPU",              "vllm-openai",      "sglang:",          "vllm:",            "vllm==",           "sglang==",
    "Using max model len",          "Capture cuda graph",                   "Chunked prefill is enabled",
    "top-p & top-k sampling",       "top-p/top-k sampling",                 "gpu-memory-utilization=",
    "apability",                    "lm_eval",                              "LLM(",
    "sglang.bench_",                "Graphics",                             "Video card",
    "--model",                      "SpecDecoding metrics",                 "Speculative metrics",
    "accept len",                   "MODEL:",                               "Model:",
};

bool has_trigger(std::string_view line) {
    for (std::string_view t : kTriggers)
        if (contains(line, t)) return true;
    return false;
}

long open_brackets(std::string_view l) {
    long depth = 0;
    char quote = 0;
    for (char c : l) {
        if (quote) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else depth += (c == '{' || c == '(' || c == '[') ? 1 : (c == '}' || c == ')' || c == ']') ? -1 : 0;
    }
    return depth;
}

class Reader {
public:
    explicit Reader(std::string source) : source_(std::move(source)) {}

    StartupLog read(LineSource& lines) {
        std::string raw;
        bool nul = false;
        while (lines.next(raw, nul)) {
            ++line_number_;
            if (nul) throw Error("--check", source_ + " holds NUL bytes: not a text log");
            track_gpu_table(raw);
            if (raw.find_first_not_of(" \t\r") == std::string::npos) continue;
            // A row of a table whose header has a GPU column holds no trigger ("| 3090 | 24G |").
            if (!has_trigger(raw) && !gpu_table_row_) continue;
            std::string line = clean_log_line(raw);
            join_continuations(line, lines);
            read_line(raw, line);
        }
        if (lines.ended_mid_line && !joined_to_end_) {
            // A file that stops without a newline is normal for a paste; one that stops inside an
            // argument list is cut.
        }
        return finish();
    }

private:
    // A Markdown table whose header row has a "GPU" column ("| GPU  | 显存 | 驱动 | CUDA |", then
    // "| ---- | ---- | ---- | ---- |" and "| 3090 | 24G  | 535  | 12.2 |"): each raw line in turn,
    // every line, blank ones included (any line that is not a row ends the table). gpu_table_row_
    // says whether this line is one of the table's rows below its separator.
    void track_gpu_table(const std::string& raw) {
        gpu_table_row_ = false;
        const std::size_t first = raw.find_first_not_of(" \t");
        if (first == std::string::npos || raw[first] != '|') {
            gpu_column_.reset(), table_rows_ = false;
            return;
        }
        if (gpu_column_ && table_rows_) {
            gpu_table_row_ = true;
            return;
        }
        if (gpu_column_) {  // the row under the header: a separator, or this was no table
            table_rows_ = is_table_separator(raw);
            if (!table_rows_) gpu_column_.reset();
            return;
        }
        for (std::size_t i = 0; i < 16; ++i) {
            std::string cell = table_cell_at(raw, i);
            if (cell.empty() && table_cell_at(raw, i + 1).empty()) break;
            std::transform(cell.begin(), cell.end(), cell.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (cell == "gpu" || cell == "gpus" || cell == "gpu model" || cell == "gpu type") {
                gpu_column_ = i;
                gpu_column_may_count_ = cell == "gpus";
                return;
            }
        }
    }

    // An argument list wrapped over several lines (logs pasted or hard-wrapped at a width) and a
    // command line continued with '\': the lines that follow are joined, as they are, until the
    // brackets close or the continuation ends.
    void join_continuations(std::string& line, LineSource& lines) {
        const bool list = contains(line, "non-default args:") || contains(line, "with config:") || contains(line, "ServerArgs(") ||
                          contains(line, "Namespace(");
        const bool command = is_command_line(line);
        if (!list && !command) return;
        std::string next;
        bool nul = false;
        for (int joined = 0; joined < kMaxJoinedLines && line.size() < kMaxLineBytes; ++joined) {
            const bool open = list && open_brackets(line) > 0;
            const std::string t = trim(line);
            const bool continued = command && !t.empty() && t.back() == '\\';
            if (!open && !continued) return;
            if (!lines.next(next, nul)) {
                if (open) joined_to_end_ = true;
                return;
            }
            ++line_number_;
            if (nul) throw Error("--check", source_ + " holds NUL bytes: not a text log");
            if (!next.empty() && next.back() == '\r') next.pop_back();
            if (continued) line = t.substr(0, t.size() - 1) + " ";
            line += next.substr(0, kMaxLineBytes - std::min(line.size(), kMaxLineBytes));
        }
    }

    static bool is_command_line(std::string_view line) {
        return contains(line, "vllm serve ") || contains(line, "vllm.entrypoints.openai.api_server") || contains(line, "vllm.entrypoints.api_server") ||
               contains(line, "sglang.launch_server") || contains(line, "sglang serve ") || contains(line, "vllm/vllm-openai") ||
               contains(line, "lmsysorg/sglang") || contains(line, "sglang.bench_") || contains(line, "lm_eval") || contains(line, "LLM(") ||
               exec_form(line);
    }

    // A container's arguments in exec form, each quoted ("CMD: `'--model' 'X' '--max-model-len' '4096'`",
    // a compose file's ["--model", "X"]): the image's entrypoint is the server.
    static bool exec_form(std::string_view line) { return contains(line, "'--model'") || contains(line, "\"--model\""); }

    void put(const std::string& key_as_printed, const std::string& value, const std::string& form, const std::string& line) {
        std::string key = canonical_key(key_as_printed);
        if (key.empty()) return;
        std::string v = value;
        if (key.front() == '!') {
            key.erase(0, 1);
            const std::optional<bool> f = flag_value(v);
            v = f ? (*f ? "False" : "True") : v;
        }
        // A printed None is "not set", except where None is itself the setting: no quantization
        // method (the checkpoint's config decides) and no speculative decoding.
        if (v == "None" && (key == "quantization" || key == "speculative_config")) v = "none";
        // A line that ends its last entry with a sentence's full stop ("gpu_memory_utilization=0.90.").
        if (v.size() > 1 && v.back() == '.' && std::isdigit(static_cast<unsigned char>(v[v.size() - 2]))) v.pop_back();
        if (v == "None" || v.empty()) return;
        const auto it = log_.settings.find(key);
        // "none" is what the user asked when the parse prints None; the engine config line then names
        // the method it resolved from the checkpoint (vLLM 0.8: args quantization=None, config
        // quantization=awq_marlin): a method beats a none whatever the form, a none never replaces one.
        if (it != log_.settings.end() && key == "quantization" && (it->second.value == "none") != (v == "none")) {
            if (v == "none") return;
            log_.settings[key] = LoggedSetting{v, form, line.substr(0, kMaxLineChars)};
            return;
        }
        // The same form again keeps the first value, except an effective-value line, which the
        // engine prints again once its defaults are resolved (vLLM 0.11 prints "Chunked prefill is
        // enabled with max_num_batched_tokens=2048" before the usage context raises it to 8192).
        if (it != log_.settings.end() && form_rank(it->second.form) >= form_rank(form) && !(form == "engine line" && it->second.form == form)) return;
        log_.settings[key] = LoggedSetting{v, form, line.substr(0, kMaxLineChars)};
    }

    void put_entries(std::string_view body, const std::string& form, const std::string& line) {
        for (const auto& [k, v] : python_entries(body)) put(k, v, form, line);
    }

    void read_command_line(const std::string& line) {
        // lm-evaluation-harness names the model in --model_args pretrained=X,...; a Python one-liner in LLM("X") or LLM(model="X").
        static const std::regex pretrained("pretrained=([^,\\s'\"]+)");
        static const std::regex llm_call("LLM\\((model\\s*=\\s*)?[\"']([^\"']+)[\"']");
        std::smatch m;
        if (contains(line, "pretrained=") && std::regex_search(line, m, pretrained)) put("model", m[1], "command line", line);
        if (contains(line, "LLM(") && std::regex_search(line, m, llm_call)) put("model", m[2], "command line", line);
        std::string spaced = line;
        if (exec_form(line))
            for (char& c : spaced)
                if (c == '`' || c == '[' || c == ']' || c == ',') c = ' ';
        const std::vector<std::string> words = shell_words(spaced);
        bool serve = false;      // after "vllm serve": the first bare word is the model
        bool started = exec_form(line);  // after the program's name (exec form: from the first word)
        std::string docker_image;
        for (std::size_t i = 0; i < words.size(); ++i) {
            const std::string& w = words[i];
            if (!started) {
                if (w == "serve" && i > 0 && (words[i - 1] == "vllm" || words[i - 1] == "sglang")) started = serve = true;
                else if (contains(w, "vllm.entrypoints") || contains(w, "sglang.launch_server") || contains(w, "sglang.bench_")) started = true;
                else if (w == "lm_eval") started = true;
                else if (contains(w, "vllm/vllm-openai") || contains(w, "lmsysorg/sglang")) started = true, docker_image = w;
                continue;
            }
            if (w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1]))) {
                std::string key = w, value;
                if (const std::size_t eq = w.find('='); eq != std::string::npos) key = w.substr(0, eq), value = w.substr(eq + 1);
                else if (i + 1 < words.size() && !(words[i + 1].size() > 1 && words[i + 1][0] == '-' && !std::isdigit(static_cast<unsigned char>(words[i + 1][1]))))
                    value = words[++i];
                else value = "True";
                if (!(key == "--model" && (value == "vllm" || value == "sglang" || value == "hf") && contains(line, "lm_eval")))  // lm_eval's backend
                    put(key, value, "command line", line);
            } else if (serve && !log_.settings.count("model")) {
                put("model", w, "command line", line);
                serve = false;
            }
        }
        if (!docker_image.empty()) {
            static const std::regex tag(":v?([0-9]+\\.[0-9]+(\\.[0-9]+)?(\\.post[0-9]+)?)");
            std::smatch m;
            if (std::regex_search(docker_image, m, tag) && package_version_.empty()) {
                package_version_ = m[1];
                package_version_basis_ = "the docker image tag " + docker_image;
            }
        }
        if (contains(line, "sglang")) engine_hint_ = "sglang";
        else engine_hint_ = engine_hint_.empty() ? "vllm" : engine_hint_;
    }

    // A server's startup header (its own parse of the arguments): a second one with another model,
    // or one after the KV cache was already sized, is a second server in the same file.
    // `server_level`: a line the API server prints once per start (the engine config line is
    // printed by each data-parallel engine and may follow another engine's KV line).
    void header(const std::string& model_text, bool server_level = true) {
        if (headers_seen_ && ((!first_model_.empty() && !model_text.empty() && model_text != first_model_) || (server_level && kv_seen_))) {
            if (!second_noted_) {
                log_.servers_seen = 2;
                // Before the first server sized its KV cache, the two startups run side by side and
                // their lines interleave: the figures that follow are still read, first come first kept.
                interleaved_ = !kv_seen_;
                log_.notes.push_back(
                    "the file holds a second server's startup (line " + std::to_string(line_number_) +
                    (model_text.empty() ? std::string() : ", model " + model_text.substr(0, 120)) + "): the first server's settings are read" +
                    (interleaved_ ? std::string("; the two startups are interleaved (the second began before the first sized its KV cache), so "
                                                "each figure is the first one printed and may be the second server's: check each server's own log")
                                  : std::string(" and its figures, up to the second start")));
                second_noted_ = true;
            }
        }
        headers_seen_ = true;
        if (first_model_.empty()) first_model_ = model_text;
    }

    bool second_server() const { return second_noted_; }

    // The engines' speculative-decoding metric lines (docs/speculative-sources.md): vLLM V1's
    // "SpecDecoding metrics: Mean acceptance length: X, ... Per-position acceptance rate: a, b, c",
    // V0's cumulative "Speculative metrics: Draft acceptance rate: ..., Number of speculative tokens:
    // K, Number of accepted tokens: A, Number of draft tokens: D, ...", SGLang's "accept len: X" in
    // its decode lines. Each line is one interval: the log's acceptance is their mean (V0: the last).
    bool read_spec_metrics(const std::string& line) {
        static const std::regex v1_mean("Mean acceptance length: ([0-9.]+)");
        static const std::regex v1_positions("Per-position acceptance rate: ([0-9., ]+[0-9])");
        static const std::regex v0("Speculative metrics: Draft acceptance rate: [0-9.]+, System efficiency: [0-9.]+, Number of speculative tokens: ([0-9]+), "
                                   "Number of accepted tokens: ([0-9]+), Number of draft tokens: ([0-9]+)");
        static const std::regex sglang("accept len: ([0-9.]+)");
        std::smatch m;
        if (contains(line, "SpecDecoding metrics") && std::regex_search(line, m, v1_mean)) {
            spec_sum_ += std::stod(m[1].str());
            ++log_.spec_metric_lines;
            if (std::regex_search(line, m, v1_positions)) {
                std::vector<double> rates;
                std::stringstream ss(m[1].str());
                for (std::string item; std::getline(ss, item, ',');)
                    if (const std::optional<double> v = number(trim(item))) rates.push_back(*v);
                if (spec_positions_sum_.empty()) spec_positions_sum_.assign(rates.size(), 0.0);
                if (rates.size() == spec_positions_sum_.size()) {
                    for (std::size_t i = 0; i < rates.size(); ++i) spec_positions_sum_[i] += rates[i];
                    ++spec_positions_lines_;
                }
            }
            log_.spec_metric_line = line.substr(0, kMaxLineChars);
            return true;
        }
        if (contains(line, "Speculative metrics") && std::regex_search(line, m, v0)) {
            const double k = std::stod(m[1].str()), accepted = std::stod(m[2].str()), drafted = std::stod(m[3].str());
            if (k > 0 && drafted > 0) {
                spec_v0_length_ = 1.0 + accepted * k / drafted;  // cumulative: the last line holds the whole run
                log_.spec_metric_line = line.substr(0, kMaxLineChars);
                ++log_.spec_metric_lines;
            }
            return true;
        }
        if (contains(line, "accept len") && std::regex_search(line, m, sglang)) {
            spec_sum_ += std::stod(m[1].str());
            ++log_.spec_metric_lines;
            log_.spec_metric_line = line.substr(0, kMaxLineChars);
            return true;
        }
        return false;
    }

    void read_line(const std::string& raw, const std::string& full_line) {
        if ((contains(full_line, "SpecDecoding metrics") || contains(full_line, "Speculative metrics") || contains(full_line, "accept len")) &&
            read_spec_metrics(full_line))
            return;
        static const std::regex version_line("vLLM API server version ([0-9][0-9A-Za-z.+]*)");
        static const std::regex collect_env_version("vLLM Version: ([0-9][0-9A-Za-z.+]*)");
        static const std::regex package_line("^\\s*(vllm|sglang)(==|:| +)\\s*v?([0-9]+\\.[0-9]+[0-9A-Za-z.+]*)\\s*$");
        static const std::regex init_line("Initializing a(n)? (V[01] )?LLM engine \\(v([0-9][0-9A-Za-z.+]*)\\) with config");
        static const std::regex model_loading("Model loading took ([0-9.]+) ?(GiB|GB)");
        static const std::regex v0_weights("Loading model weights took ([0-9.]+) ?(GiB|GB|MiB|MB)");
        static const std::regex breakdown(
            "model weights take ([0-9.]+) ?(GiB|GB); non_torch_memory takes (-?[0-9.]+) ?(GiB|GB); PyTorch activation peak memory takes ([0-9.]+) "
            "?(GiB|GB); the rest of the memory reserved for KV Cache is (-?[0-9.]+) ?(GiB|GB)");
        static const std::regex profiling("total_gpu_memory=([0-9.]+) ?(GiB|GB).*non_torch_memory=(-?[0-9.]+) ?(GiB|GB).*kv_cache_size=(-?[0-9.]+) ?(GiB|GB)");
        static const std::regex total_times("total_gpu_memory \\(([0-9.]+) ?(GiB|GB)\\) x gpu_memory_utilization \\(([0-9.]+)\\)");
        static const std::regex oom_total("total capac(i)?ty of ([0-9.]+) (GiB|MiB)|([0-9.]+) (GiB|MiB) total capacity");
        static const std::regex blocks("(^|# )(GPU|CUDA) blocks: ([0-9,]+)");
        static const std::regex cpu_blocks("# CPU blocks: ([0-9,]+)");
        static const std::regex swap_space("swap[_-]space[= ]([0-9.]+)");
        static const std::regex available("Available KV cache memory: (-?[0-9.]+) ?(GiB|GB)");
        static const std::regex kv_tokens("GPU KV cache size: ([0-9,]+) tokens");
        static const std::regex concurrency("Maximum concurrency for ([0-9,]+) tokens per request: ([0-9.,]+) ?x");
        static const std::regex graphs("Graph capturing finished in [0-9.]+ secs?, took (-?[0-9.]+) ?(GiB|GB)");
        static const std::regex free_memory(
            "Free memory on device \\(([0-9.]+)/([0-9.]+) GiB\\) on startup.*Actual usage is ([0-9.]+) GiB for weight, ([0-9.]+) GiB for peak "
            "activation, ([0-9.]+) GiB for non-torch memory, and ([0-9.]+) GiB for CUDAGraph memory");
        static const std::regex free_memory_total("Free memory on device \\(([0-9.]+)/([0-9.]+) GiB\\)");
        // The same line from vLLM 0.2x, weights and non-torch memory as one figure:
        static const std::regex free_memory_consumed(
            "Actual usage is ([0-9.]+) GiB for consumed memory \\(weights \\+ non-torch\\), ([0-9.]+) GiB for peak activation, and ([0-9.]+) GiB for "
            "CUDAGraph memory");
        static const std::regex kv_in_use("Current kv cache memory in use is ([0-9.]+) ?(GiB|bytes)");
        // vLLM with kv_cache_memory_bytes set skips the profile's budget and says so.
        static const std::regex reserved_kv("Initial free memory (-?[0-9.]+) ?(GiB|GB), reserved (-?[0-9.]+) ?(GiB|GB) memory for KV Cache");
        static const std::regex too_long("larger than the maximum number of tokens that can be stored in KV cache \\(([0-9,]+)\\)");
        static const std::regex sglang_kv("KV Cache is allocated\\. #tokens: ([0-9,]+), K size: ([0-9.]+) (GB|GiB), V size: ([0-9.]+) (GB|GiB)");
        static const std::regex sglang_mla_kv("KV Cache is allocated\\. #tokens: ([0-9,]+), KV size: ([0-9.]+) (GB|GiB)");
        static const std::regex sglang_weights("Load weight end\\..*mem usage=([0-9.]+) ?(GB|GiB)");
        static const std::regex sglang_begin("Load weight begin\\. avail mem=([0-9.]+) ?(GB|GiB)");
        static const std::regex sglang_graph("Capture cuda graph end\\..*mem usage=(-?[0-9.]+) ?(GB|GiB)");
        static const std::regex sglang_rank("\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}[^\\]]*? (TP[0-9]+)[^\\]]*\\]");
        static const std::regex max_total("max_total_num_tokens=([0-9,]+)");
        static const std::regex scheduler_line("max_total_num_tokens=[0-9,]+, (.*)$");
        static const std::regex max_model_len_line("Using max model len ([0-9]+)");
        static const std::regex chunked_line("Chunked prefill is enabled with max_num_batched_tokens=([0-9]+)");
        static const std::regex smi_row("^\\|\\s+[0-9]+\\s+((NVIDIA|Tesla|Quadro|AMD)[^|]*?)\\s+(On|Off)\\s+\\|");
        static const std::regex smi_list("GPU [0-9]+(,[0-9]+)*: ((NVIDIA|Tesla|Quadro|AMD)[^(]*?)\\s*(\\(UUID.*)?$");
        static const std::regex torch_found("Found GPU[0-9]+ ((NVIDIA|Tesla|Quadro)[^\\n]*?) which is of cuda capability");
        // vLLM's fused-MoE and other kernel config files are named for the device, spaces as '_'
        // (".../E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3.json").
        static const std::regex config_file_device("device_name=((NVIDIA|Tesla|Quadro|AMD)[A-Za-z0-9_\\-]*)(,[^/]*)?\\.json");
        static const std::regex device_field("([Dd]evice[ _]name|CUDA device|GPU type|GPU model)\\s*[:=]\\s*'?((NVIDIA|Tesla|Quadro|AMD)[^',)\\]]*)");
        // A Markdown table cell that holds a GPU name ("| GPU 型号 | `NVIDIA GeForce RTX 4090` |").
        static const std::regex table_cell("\\|\\s*`?((NVIDIA|Tesla|Quadro|AMD) [^|`]*?)`?\\s*\\|");
        // A system description pasted with the log ("- Graphics: RTX 3090", "GPU: 2x RTX 4090 (24GB)"):
        // the value is kept only when it names a GPU model.
        static const std::regex spec_line("^[\\s>*#-]*(GPU|GPUs|Graphics|Graphics card|Video card)\\s*[:=]\\s*(.+)$");
        static const std::regex gpu_model_word("\\b(RTX|GTX|Tesla|Quadro|A100|A800|H100|H800|H200|H20|GH200|B200|L40S?|L4|L20|A10G?|A6000|T4|V100|MI[0-9]{3}X?)\\b");

        const std::string line = full_line.substr(0, kMaxRegexChars);
        std::smatch m;
        const bool in_second = second_server();
        // Versions.
        if (contains(line, "vLLM API server version") && std::regex_search(line, m, version_line)) {
            header("");
            log_.engine = "vllm", recognised_ = true;
            if (log_.version.empty()) log_.version = m[1], version_basis_ = "version line";
        }
        if (contains(line, "vLLM Version:") && std::regex_search(line, m, collect_env_version) && package_version_.empty())
            package_version_ = m[1], package_version_basis_ = "vLLM's collect_env";
        if ((contains(line, "vllm") || contains(line, "sglang")) && std::regex_search(line, m, package_line)) {
            packages_[m[1]] = m[3];
        }
        // The engine's parse of its arguments.
        if (contains(line, "LLM engine (v") && std::regex_search(line, m, init_line)) {
            log_.engine = "vllm", recognised_ = true;
            const std::size_t at = full_line.find("with config:");
            const std::string body = at == std::string::npos ? std::string() : full_line.substr(at + 12);
            std::string model;
            for (const auto& [k, v] : python_entries(body))
                if (k == "model") model = v;
            header(model, false);
            if (!in_second && !second_server()) {
                if (log_.version.empty()) log_.version = m[3], version_basis_ = "engine config line";
                if (log_.engine_generation.empty()) log_.engine_generation = m[2].matched && m[2].str() == "V1 " ? "v1" : "v0";
                put_entries(body, "engine config", full_line);
            }
        }
        if (const std::size_t at = full_line.find("non-default args:"); at != std::string::npos) {
            log_.engine = log_.engine.empty() ? "vllm" : log_.engine, recognised_ = true;
            const std::size_t open = full_line.find('{', at);
            const std::string body = open == std::string::npos ? std::string() : full_line.substr(open + 1);
            std::string model;
            for (const auto& [k, v] : python_entries(body))
                if (k == "model" || k == "model_tag") model = v;
            header(model);
            if (!second_server()) {
                put_entries(body, "non-default args", full_line);
                for (const auto& [k, v] : python_entries(body))
                    if (k == "model_tag") put("model", v, "non-default args", full_line);
            }
        }
        // "args: Namespace(...)", or a benchmark script's bare print of its Namespace.
        if (const std::size_t at = full_line.find("Namespace("); at != std::string::npos &&
                                                                 (contains(full_line, "args") || contains(full_line, "gpu_memory_utilization=") ||
                                                                  contains(full_line, "tensor_parallel_size="))) {
            const std::string body = full_line.substr(at + 10);
            std::string model;
            for (const auto& [k, v] : python_entries(body))
                if (k == "model" || k == "model_path" || k == "model_tag") model = v;
            header(model);
            if (!second_server()) {
                recognised_ = true;
                if (contains(body, "model_path=") || contains(body, "mem_fraction_static=")) engine_hint_ = "sglang";
                else if (log_.engine.empty()) log_.engine = "vllm";
                put_entries(body, "args: Namespace", full_line);
                for (const auto& [k, v] : python_entries(body))
                    if (k == "model_tag") put("model", v, "args: Namespace", full_line);
            }
        }
        if (const std::size_t at = full_line.find("server_args=ServerArgs("); at != std::string::npos) {
            const std::string body = full_line.substr(at + 23);
            std::string model;
            for (const auto& [k, v] : python_entries(body))
                if (k == "model_path") model = v;
            header(model);
            log_.engine = "sglang", recognised_ = true;
            if (!second_server()) put_entries(body, "ServerArgs", full_line);
        }
        if (is_command_line(line) && !contains(line, "args:") && !contains(line, "Namespace(") && !second_server()) read_command_line(full_line);
        // A system description pasted with the log names the model ("MODEL: meta-llama/Llama-3.1-8B-Instruct"):
        // the weakest form, any printed setting replaces it.
        // The raw line: a logger's "INFO ... Model: X" is not a person's description.
        if (contains(line, "odel:") || contains(line, "ODEL:")) {
            // The value holds a letter: lscpu's "Model:                 143" in a pasted collect_env is a CPU's.
            static const std::regex described_model("^[\\s>*#-]*(MODEL|Model)\\s*:\\s*`?([A-Za-z0-9._/-]*[A-Za-z][A-Za-z0-9._/-]*)`?\\s*\r?$");
            const std::string first = raw.substr(0, kMaxRegexChars);
            if (std::regex_search(first, m, described_model)) put("model", m[2], "description", line);
        }
        if (in_second && !interleaved_) return;  // the second server's figures are not the first's
        // Effective values the engine prints.
        if (contains(line, "The current --gpu-memory-utilization=")) {
            static const std::regex current("The current --gpu-memory-utilization=([0-9.]+[0-9])");
            if (std::regex_search(line, m, current)) put("gpu_memory_utilization", m[1], "engine line", line);
        }
        if (contains(line, "Using max model len") && std::regex_search(line, m, max_model_len_line)) put("max_model_len", m[1], "engine line", line);
        if (contains(line, "Chunked prefill is enabled") && std::regex_search(line, m, chunked_line)) {
            put("max_num_batched_tokens", m[1], "engine line", line);
            put("enable_chunked_prefill", "True", "engine line", line);
        }
        // Lines only V0's worker and runner print (vLLM 0.6.4 to 0.7: the one-line memory profile).
        if (contains(line, "Memory profiling results") || contains(line, "[model_runner.py") || contains(line, " model_runner.py:") ||
            contains(line, "multiproc_worker_utils.py"))
            v0_wording_ = true;
        // The sampler the profiling run used (its copies of the logits are the activation peak).
        if (!log_.native_sampler) {
            if (contains(line, "Using FlashInfer for top-p & top-k sampling")) log_.native_sampler = false;
            else if (contains(line, "PyTorch-native implementation of top-p & top-k sampling") ||
                     contains(line, "FlashInfer top-p/top-k sampling unavailable") || contains(line, "FlashInfer top-p/top-k sampling disabled"))
                log_.native_sampler = true;
        }
        if (contains(line, "lacks GPU P2P capability")) log_.gpu_p2p = false;
        // The compute capability (a vLLM warning's "Device capability 8.0", torch's "cuda capability 8.6").
        if (log_.compute_capability.empty() && contains(line, "apability")) {
            static const std::regex capability("(Device|cuda|CUDA|compute) capability:? ([0-9]{1,2})\\.([0-9])");
            if (std::regex_search(line, m, capability)) log_.compute_capability = "sm_" + m[2].str() + m[3].str();
        }
        // GPU names.
        if (log_.device_names.size() < 16) {
            std::string name;
            if (!line.empty() && line[0] == '|' && std::regex_search(line, m, smi_row)) name = m[1];
            else if (contains(line, "GPU ") && contains(line, ": ") && std::regex_search(line, m, smi_list)) name = m[2];
            else if (contains(line, "Found GPU") && std::regex_search(line, m, torch_found)) name = m[1];
            else if (contains(line, "device_name=") && std::regex_search(line, m, config_file_device)) {
                name = m[1];
                std::replace(name.begin(), name.end(), '_', ' ');
            } else if (std::regex_search(line, m, device_field)) name = m[2];
            else if (!line.empty() && line[0] == '|' && std::regex_search(line, m, table_cell)) name = m[1];
            else if (gpu_table_row_) {
                // A cell that names a GPU model ("RTX 3090", "A100") or is a bare four-digit model
                // number ("3090", "4090D") under a "GPU" header, not a per-GPU table's index, a
                // "GPUs" column's count or a key-value table's next key.
                const std::string cell = table_cell_at(raw, *gpu_column_);
                static const std::regex model_number("^[0-9]{4}( ?(Ti|D))?$");
                if (std::regex_search(cell, gpu_model_word) || (!gpu_column_may_count_ && std::regex_search(cell, model_number))) name = cell;
            }
            else if (contains(line, ":") && std::regex_search(line, m, spec_line) && std::regex_search(m[2].str(), gpu_model_word))
                name = spec_gpu_name(m[2]);
            name = trim(name);
            if (!name.empty() && name.size() <= 80) log_.device_names.push_back({name, line.substr(0, kMaxLineChars)});
        }
        // Memory figures.
        if (contains(line, "took")) {
            if (std::regex_search(line, m, model_loading)) keep_first(log_.weights_bytes, bytes_quantity(m[1], m[2], line, log_)), recognised_ = true;
            else if (std::regex_search(line, m, v0_weights)) keep_first(log_.weights_bytes, bytes_quantity(m[1], m[2], line, log_)), recognised_ = true;
            if (std::regex_search(line, m, graphs)) keep_first(log_.cuda_graph_bytes, bytes_quantity(m[1], m[2], line, log_)), recognised_ = true;
        }
        if (contains(line, "model weights take") && std::regex_search(line, m, breakdown)) {
            recognised_ = true;
            keep_first(log_.weights_bytes, bytes_quantity(m[1], m[2], line, log_));
            keep_first(log_.non_torch_bytes, bytes_quantity(m[3], m[4], line, log_));
            keep_first(log_.activation_peak_bytes, bytes_quantity(m[5], m[6], line, log_));
            keep_first(log_.kv_cache_bytes, bytes_quantity(m[7], m[8], line, log_));
        }
        if (contains(line, "Memory profiling results") && std::regex_search(line, m, profiling)) {
            recognised_ = true;
            keep_first(log_.total_memory_bytes, bytes_quantity(m[1], m[2], line, log_));
            keep_first(log_.non_torch_bytes, bytes_quantity(m[3], m[4], line, log_));
            keep_first(log_.kv_cache_bytes, bytes_quantity(m[5], m[6], line, log_));
            static const std::regex utilization("gpu_memory_utilization=([0-9.]+[0-9])");
            std::smatch u;
            if (std::regex_search(line, u, utilization)) put("gpu_memory_utilization", u[1], "engine line", line);
        }
        if (contains(line, "total_gpu_memory (") && std::regex_search(line, m, total_times)) {
            recognised_ = true;
            keep_first(log_.total_memory_bytes, bytes_quantity(m[1], m[2], line, log_));
            put("gpu_memory_utilization", m[3], "engine line", line);
        }
        if (contains(line, "capac") && std::regex_search(line, m, oom_total)) {
            const bool first = m[2].matched;
            keep_first(log_.total_memory_bytes, bytes_quantity(first ? m[2] : m[4], first ? m[3] : m[5], line, log_));
        }
        if (contains(line, " blocks: ") && std::regex_search(line, m, blocks)) keep_first(log_.gpu_blocks, count_quantity(m[3], line)), recognised_ = true, kv_seen_ = true;
        if (contains(line, "CPU blocks: ") && std::regex_search(line, m, cpu_blocks)) keep_first(log_.cpu_blocks, count_quantity(m[1], line));
        if (!log_.swap_space_gib && contains(line, "swap") && std::regex_search(line, m, swap_space))
            if (const std::optional<double> v = number(m[1].str()); v && *v > 0 && *v < 1e6) log_.swap_space_gib = *v;
        if (contains(line, "Available KV cache memory") && std::regex_search(line, m, available))
            keep_first(log_.kv_cache_bytes, bytes_quantity(m[1], m[2], line, log_)), recognised_ = true;
        if (contains(line, "GPU KV cache size") && std::regex_search(line, m, kv_tokens))
            keep_first(log_.kv_cache_tokens, count_quantity(m[1], line)), recognised_ = true, kv_seen_ = true;
        if (contains(line, "Maximum concurrency") && std::regex_search(line, m, concurrency)) {
            keep_first(log_.max_concurrency, count_quantity(m[2], line)), recognised_ = true;
            if (const std::optional<double> n = number(m[1]); !log_.max_concurrency_tokens && n && *n >= 1 && *n <= 1e9)
                log_.max_concurrency_tokens = static_cast<std::int64_t>(*n);
        }
        if (contains(line, "Initial free memory") && std::regex_search(line, m, reserved_kv)) {
            keep_first(free_at_start_, bytes_quantity(m[1], m[2], line, log_));
            keep_first(log_.kv_cache_bytes, bytes_quantity(m[3], m[4], line, log_));
            keep_first(reserved_kv_, bytes_quantity(m[3], m[4], line, log_));
            log_.engine = "vllm", recognised_ = true;
        }
        if (contains(line, "Free memory on device")) {
            if (std::regex_search(line, m, free_memory)) {
                recognised_ = true;
                keep_first(log_.total_memory_bytes, bytes_quantity(m[2], "GiB", line, log_));
                keep_first(log_.weights_bytes, bytes_quantity(m[3], "GiB", line, log_));
                keep_first(log_.activation_peak_bytes, bytes_quantity(m[4], "GiB", line, log_));
                keep_first(log_.non_torch_bytes, bytes_quantity(m[5], "GiB", line, log_));
                keep_first(log_.cuda_graph_bytes, bytes_quantity(m[6], "GiB", line, log_));
            } else if (std::regex_search(line, m, free_memory_total)) {
                keep_first(log_.total_memory_bytes, bytes_quantity(m[2], "GiB", line, log_));
                if (std::regex_search(line, m, free_memory_consumed)) {
                    recognised_ = true;
                    keep_first(log_.activation_peak_bytes, bytes_quantity(m[2], "GiB", line, log_));
                    keep_first(log_.cuda_graph_bytes, bytes_quantity(m[3], "GiB", line, log_));
                }
            }
            if (std::regex_search(line, m, kv_in_use)) {
                if (m[2] == "bytes") {
                    if (const std::optional<double> v = number(m[1].str()); v && *v >= 0 && *v < 1e16)
                        keep_first(log_.kv_cache_bytes, LoggedQuantity{*v, m[1].str() + " bytes", line.substr(0, kMaxLineChars)});
                } else {
                    keep_first(log_.kv_cache_bytes, bytes_quantity(m[1], m[2], line, log_));
                }
            }
        }
        if (contains(line, "stored in KV cache") && std::regex_search(line, m, too_long)) {
            if (!log_.kv_cache_tokens) log_.notes.push_back("the KV-cache size comes from the max-model-len error, not from a size line");
            keep_first(log_.kv_cache_tokens, count_quantity(m[1], line)), recognised_ = true, kv_seen_ = true;
        }
        if (contains(line, "KV Cache is allocated")) {
            if (std::regex_search(line, m, sglang_kv)) {
                log_.engine = "sglang", recognised_ = true, kv_seen_ = true;
                keep_first(log_.kv_cache_tokens, count_quantity(m[1], line));
                const std::optional<double> k = number(m[2]), v = number(m[4]);
                if (k && v && !log_.kv_cache_bytes)
                    log_.kv_cache_bytes = LoggedQuantity{(*k + *v) * kGiB, m[2].str() + " + " + m[4].str() + " " + m[3].str(), line.substr(0, kMaxLineChars)};
            } else if (std::regex_search(line, m, sglang_mla_kv)) {
                log_.engine = "sglang", recognised_ = true, kv_seen_ = true;
                keep_first(log_.kv_cache_tokens, count_quantity(m[1], line));
                keep_first(log_.kv_cache_bytes, bytes_quantity(m[2], m[3], line, log_));
            }
            std::smatch rank;
            const std::string head = raw.substr(0, kMaxPrefixChars);
            if (std::regex_search(head, rank, sglang_rank)) kv_ranks_.insert(rank[1]);
        }
        if (contains(line, "Load weight end") && std::regex_search(line, m, sglang_weights))
            keep_first(log_.weights_bytes, bytes_quantity(m[1], m[2], line, log_)), log_.engine = "sglang", recognised_ = true;
        if (contains(line, "Load weight begin") && std::regex_search(line, m, sglang_begin)) {
            keep_first(free_at_start_, bytes_quantity(m[1], m[2], line, log_));
            log_.engine = "sglang", recognised_ = true;
        }
        if (contains(line, "Capture cuda graph end") && std::regex_search(line, m, sglang_graph))
            keep_first(log_.cuda_graph_bytes, bytes_quantity(m[1], m[2], line, log_)), recognised_ = true;
        if (contains(line, "max_total_num_tokens=") && std::regex_search(line, m, max_total)) {
            keep_first(log_.kv_cache_tokens, count_quantity(m[1], line)), recognised_ = true, kv_seen_ = true;
            std::smatch rest;
            if (std::regex_search(line, rest, scheduler_line))
                for (const auto& [k, v] : python_entries(rest[1].str())) {
                    if (k == "max_running_requests") put("max_num_seqs", v, "engine line", line);
                    if (k == "context_len") put("max_model_len", v, "engine line", line);
                    if (k == "chunked_prefill_size") put("chunked_prefill_size", v, "engine line", line);
                }
        }
    }

    // The typed settings from the text ones, each checked against its domain.
    void settle_settings() {
        const auto domain_of = [](const std::string& key) -> const Domain* {
            for (const Domain& d : kDomains)
                if (key == d.key) return &d;
            return nullptr;
        };
        for (auto it = log_.settings.begin(); it != log_.settings.end();) {
            const std::string& key = it->first;
            const LoggedSetting& s = it->second;
            const Domain* d = domain_of(key);
            bool ok = true;
            if (d) {
                switch (d->kind) {
                    case Domain::Real: {
                        const std::optional<double> v = number(s.value);
                        ok = v && *v > d->low && *v <= d->high;
                        break;
                    }
                    case Domain::Integer: {
                        const std::optional<double> v = integer_value(s.value);
                        ok = v && *v >= d->low && *v <= d->high && !(key == "chunked_prefill_size" && *v == 0);
                        break;
                    }
                    case Domain::Flag: ok = flag_value(s.value).has_value(); break;
                    case Domain::Name: ok = is_name(s.value); break;
                    case Domain::Text: break;
                }
            }
            if (!ok) {
                log_.rejected.push_back({key, s.value.substr(0, 80), d->text, s.form});
                log_.notes.push_back("the log's " + key + "=" + s.value.substr(0, 80) + " (" + s.form + ") is outside its domain (" + d->text +
                                     "): not used");
                it = log_.settings.erase(it);
            } else {
                ++it;
            }
        }
        const auto text = [&](const char* key) -> std::optional<std::string> {
            const auto it = log_.settings.find(key);
            return it == log_.settings.end() ? std::nullopt : std::optional<std::string>(it->second.value);
        };
        const auto integer = [&](const char* key) -> std::optional<std::int64_t> {
            const std::optional<std::string> t = text(key);
            if (!t) return std::nullopt;
            const std::optional<double> v = integer_value(*t);
            return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
        };
        const auto real = [&](const char* key) -> std::optional<double> {
            const std::optional<std::string> t = text(key);
            return t ? number(*t) : std::nullopt;
        };
        const auto flag = [&](const char* key) -> std::optional<bool> {
            const std::optional<std::string> t = text(key);
            return t ? flag_value(*t) : std::nullopt;
        };
        if (const auto m = text("model")) log_.model = *m;
        if (auto dt = text("dtype")) {
            if (dt->starts_with("torch.")) dt->erase(0, 6);
            log_.dtype = *dt;
        }
        log_.quantization = text("quantization");
        if (log_.quantization == "none") log_.quantization.reset();
        log_.kv_cache_dtype = text("kv_cache_dtype");
        log_.max_model_len = integer("max_model_len");
        log_.tensor_parallel = integer("tensor_parallel_size");
        log_.pipeline_parallel = integer("pipeline_parallel_size");
        log_.data_parallel = integer("data_parallel_size");
        log_.gpu_memory_utilization = real("gpu_memory_utilization");
        log_.mem_fraction_static = real("mem_fraction_static");
        log_.max_num_seqs = integer("max_num_seqs");
        log_.max_num_batched_tokens = integer("max_num_batched_tokens");
        if (const auto chunk = integer("chunked_prefill_size")) {
            // SGLang's chunk is the tokens of one prefill forward; -1 turns chunking off.
            if (*chunk > 0 && !log_.max_num_batched_tokens) log_.max_num_batched_tokens = *chunk;
            if (*chunk < 0) log_.chunked_prefill = false;
        }
        log_.enforce_eager = flag("enforce_eager");
        if (const auto c = flag("enable_chunked_prefill")) log_.chunked_prefill = *c;
        log_.block_size_tokens = integer("block_size");
        log_.enable_prefix_caching = flag("enable_prefix_caching");
        log_.cpu_offload_gb = real("cpu_offload_gb");
        log_.kv_cache_memory_bytes = integer("kv_cache_memory_bytes");
        // vLLM prints its "reserved ... as specified by kv_cache_memory_bytes" line only when the
        // setting is on: where no form of the setting was read, the line's size (two decimals of
        // GiB) stands for it.
        if (!log_.kv_cache_memory_bytes && reserved_kv_ && reserved_kv_->value >= 1 && reserved_kv_->value <= 1e15) {
            log_.kv_cache_memory_bytes = std::llround(reserved_kv_->value);
            log_.settings["kv_cache_memory_bytes"] = LoggedSetting{std::to_string(*log_.kv_cache_memory_bytes), "reserved-KV line", reserved_kv_->line};
        }
        log_.speculative = text("speculative_config");
        if (log_.speculative == "none") log_.speculative.reset();
        if (log_.speculative) {
            std::string lower = *log_.speculative;
            std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            log_.speculative_method = contains(lower, "eagle3")                                                   ? "eagle3"
                                      : contains(lower, "eagle")                                                  ? "eagle"
                                      : contains(lower, "mtp") || contains(lower, "nextn")                        ? "mtp"
                                      : contains(lower, "ngram")                                                  ? "ngram"
                                      : contains(lower, "standalone") || contains(lower, "draft_model") || contains(lower, "/") ? "draft"
                                                                                                                  : "";
            static const std::regex k_in_config("num_spec(ulative)?_tokens['\"]?\\s*[:=]\\s*([0-9]+)");
            std::smatch m;
            if (std::regex_search(*log_.speculative, m, k_in_config)) log_.speculative_tokens = std::stoll(m[2].str());
        }
        if (!log_.speculative_tokens) log_.speculative_tokens = integer("num_speculative_tokens");
        log_.speculative_topk = integer("speculative_eagle_topk");
    }

    double spec_sum_ = 0, spec_v0_length_ = 0;
    std::vector<double> spec_positions_sum_;
    std::int64_t spec_positions_lines_ = 0;

    StartupLog finish() {
        if (log_.spec_metric_lines > 0) {
            log_.spec_mean_acceptance_length = spec_v0_length_ > 0 ? spec_v0_length_ : spec_sum_ / static_cast<double>(log_.spec_metric_lines);
            if (spec_positions_lines_ > 0)
                for (double sum : spec_positions_sum_) log_.spec_per_position.push_back(sum / static_cast<double>(spec_positions_lines_));
        }
        if (!recognised_)
            throw Error("--check", source_ + " is not a vLLM or SGLang startup log: expected lines such as 'Initializing a V1 LLM engine (v...) with "
                                             "config', 'GPU KV cache size: N tokens', '# GPU blocks: N' or 'KV Cache is allocated. #tokens: N'");
        if (log_.engine.empty()) log_.engine = engine_hint_.empty() ? "vllm" : engine_hint_;
        // The version: the engine's own line, else the package list or image tag pasted with it.
        if (log_.version.empty()) {
            if (const auto it = packages_.find(log_.engine); it != packages_.end()) {
                log_.version = it->second;
                version_basis_ = "the package list pasted with the log";
                log_.notes.push_back("engine version " + it->second + " from the package list pasted with the log");
            } else if (!package_version_.empty()) {
                log_.version = package_version_;
                version_basis_ = package_version_basis_;
                log_.notes.push_back("engine version " + package_version_ + " from " + package_version_basis_);
            }
        }
        settle_settings();
        // A max-model-len error's token count is the cache of the run that failed; a block count
        // logged beside it is the engine's own figure and wins (a pasted thread may hold two runs).
        if (log_.kv_cache_tokens && log_.gpu_blocks && contains(log_.kv_cache_tokens->line, "stored in KV cache")) {
            log_.notes.push_back("the max-model-len error's " + log_.kv_cache_tokens->as_logged + " tokens are not used: the block count is the engine's own figure");
            log_.kv_cache_tokens.reset();
        }
        if (joined_to_end_) {
            log_.truncated = true;
            log_.notes.push_back("the log ends inside an argument list: it is cut; the settings read from that list may be incomplete");
        }
        const bool any_figure = log_.weights_bytes || log_.kv_cache_bytes || log_.kv_cache_tokens || log_.gpu_blocks || log_.total_memory_bytes ||
                                log_.non_torch_bytes || log_.activation_peak_bytes || log_.cuda_graph_bytes || log_.max_concurrency;
        if (!any_figure)
            throw Error("--check", source_ + " sets up a " + log_.engine +
                                       " server but ends before any memory figure (weights, KV cache): the log is cut or the start failed earlier; pass the "
                                       "log up to its KV-cache line");
        if (free_at_start_ && !log_.total_memory_bytes) log_.free_memory_at_start_bytes = free_at_start_;
        if (log_.engine == "vllm" && log_.engine_generation.empty()) {
            const bool v1_wording = log_.kv_cache_tokens && contains(log_.kv_cache_tokens->line, "GPU KV cache size");
            if (log_.gpu_blocks || (log_.activation_peak_bytes && !log_.cuda_graph_bytes && !v1_wording) || (v0_wording_ && !v1_wording))
                log_.engine_generation = "v0";
            else if (v1_wording || log_.kv_cache_tokens) log_.engine_generation = "v1";
        }
        log_.ranks_seen = std::max<std::int64_t>(1, static_cast<std::int64_t>(kv_ranks_.size()));
        if (log_.ranks_seen > 1) log_.notes.push_back(std::to_string(log_.ranks_seen) + " ranks logged the KV cache; the first rank's figures are used");
        if (!version_basis_.empty()) log_.version_basis = version_basis_;
        return std::move(log_);
    }

    std::string source_;
    StartupLog log_;
    bool recognised_ = false;
    bool kv_seen_ = false;
    bool headers_seen_ = false;
    bool second_noted_ = false;
    bool interleaved_ = false;  // a second startup began before the first's KV cache was sized
    std::optional<std::size_t> gpu_column_;  // a Markdown table's "GPU" column, from its header row
    bool gpu_column_may_count_ = false;      // its header is "GPUs": a bare number there is a count
    bool table_rows_ = false;                // past that table's separator row
    bool gpu_table_row_ = false;             // the line being read is one of that table's rows
    bool v0_wording_ = false;   // a line only V0 prints
    bool joined_to_end_ = false;
    std::string first_model_;
    std::string engine_hint_;
    std::string version_basis_;
    std::string package_version_, package_version_basis_;
    std::map<std::string, std::string> packages_;
    std::optional<LoggedQuantity> free_at_start_;
    std::optional<LoggedQuantity> reserved_kv_;  // vLLM's "reserved Y GiB memory for KV Cache as specified by kv_cache_memory_bytes"
    std::set<std::string> kv_ranks_;
    std::size_t line_number_ = 0;
};

}  // namespace

std::string clean_log_line(std::string_view raw) {
    // Prefixes sit in the first characters; the regex sees only those (libstdc++'s regex recurses
    // once per character and would overflow the stack on a long line).
    static const std::regex prefixes(
        "^(\\s*\\([A-Za-z_][A-Za-z0-9_ =]*pid=[0-9]+(, ip=[0-9.:a-fA-F]+)?\\)\\s*|\\s*\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}[^\\]]{0,40}\\]\\s*|"
        "\\s*(INFO|WARNING|DEBUG|ERROR|CRITICAL) [0-9]{2}-[0-9]{2} [0-9:]{8}(\\.[0-9]+)? (\\[[^\\]]{0,120}\\]|[A-Za-z0-9_./-]{1,120}:[0-9]+\\])\\s*){1,6}");
    std::string line;
    line.reserve(std::min<std::size_t>(raw.size(), kMaxLineBytes));
    // ANSI colour codes: ESC [ digits/semicolons letter.
    for (std::size_t i = 0; i < raw.size() && line.size() < kMaxLineBytes; ++i) {
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
    ViewLines lines(text);
    return Reader(source).read(lines);
}

StartupLog read_startup_log(std::istream& in, const std::string& source) {
    StreamLines lines(in);
    return Reader(source).read(lines);
}

}  // namespace quantplan::check
