#include "app/text_table.h"

#include <cstdio>

#include <algorithm>

namespace quantplan::app {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> align) : headers_(std::move(headers)), align_(std::move(align)) {
    for (std::size_t i = align_.size(); i < headers_.size(); ++i) align_.push_back(i == 0 ? Align::Left : Align::Right);
}

void TextTable::add_row(std::vector<std::string> cells, std::string tail) {
    cells.resize(headers_.size());  // missing cells empty (the header's contract: at most as many)
    rows_.push_back({std::move(cells), std::move(tail)});
}

void TextTable::print(std::ostream& out) const {
    std::vector<std::size_t> width(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) {
        width[c] = headers_[c].size();
        for (const Row& r : rows_) width[c] = std::max(width[c], r.cells[c].size());
    }
    const auto line = [&](const std::vector<std::string>& cells, const std::string& tail) {
        std::string text;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            if (c > 0) text += "  ";
            const std::string pad(width[c] - cells[c].size(), ' ');
            text += align_[c] == Align::Left ? cells[c] + pad : pad + cells[c];
        }
        if (!tail.empty()) text += "  " + tail;
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out << text << "\n";
    };
    line(headers_, {});
    for (const Row& r : rows_) line(r.cells, r.tail);
}

}  // namespace quantplan::app
