#include "ui/window/log_slider.h"

#include <algorithm>
#include <cmath>

#include <QtCore/QSignalBlocker>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QSlider>
#include <QtWidgets/QSpinBox>

namespace quantplan::ui {

std::vector<std::int64_t> log_slider_values(std::int64_t lo, std::int64_t hi) {
    std::vector<std::int64_t> v;
    if (lo < 1 || hi < lo) return v;
    const double octaves = std::log2(static_cast<double>(hi) / static_cast<double>(lo));
    const int steps = static_cast<int>(std::ceil(octaves * kLogSliderStepsPerOctave));
    for (int i = 0; i <= steps; ++i) {
        const double x = static_cast<double>(lo) * std::exp2(static_cast<double>(i) / kLogSliderStepsPerOctave);
        v.push_back(std::clamp<std::int64_t>(std::llround(x), lo, hi));
    }
    for (std::int64_t p = 1; p <= hi; p *= 2)
        if (p >= lo) v.push_back(p);
    v.push_back(hi);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

LogSlider::LogSlider(std::int64_t lo, std::int64_t hi, QWidget* parent) : QWidget(parent), stops_(log_slider_values(lo, hi)) {
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setRange(0, static_cast<int>(stops_.size()) - 1);
    slider_->setPageStep(kLogSliderStepsPerOctave);
    spin_ = new QSpinBox(this);
    spin_->setRange(static_cast<int>(lo), static_cast<int>(hi));
    spin_->setGroupSeparatorShown(true);
    spin_->setKeyboardTracking(false);  // typed entry applies on Enter or focus out, not per digit
    spin_->setMinimumWidth(spin_->fontMetrics().horizontalAdvance(QStringLiteral("131,072")) + 40);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_);
    value_ = lo;
    setValueSilently(lo);
    connect(slider_, &QSlider::valueChanged, this, [this](int position) {
        if (position >= 0 && position < static_cast<int>(stops_.size())) setValue(stops_[static_cast<std::size_t>(position)]);
    });
    connect(spin_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int v) { setValue(v); });
}

void LogSlider::syncSlider() {
    // The nearest stop in log distance.
    std::size_t best = 0;
    double best_distance = INFINITY;
    for (std::size_t i = 0; i < stops_.size(); ++i) {
        const double d = std::fabs(std::log2(static_cast<double>(stops_[i])) - std::log2(static_cast<double>(value_)));
        if (d < best_distance) {
            best_distance = d;
            best = i;
        }
    }
    const QSignalBlocker block(slider_);
    slider_->setValue(static_cast<int>(best));
}

void LogSlider::setValueSilently(std::int64_t value) {
    value_ = std::clamp<std::int64_t>(value, stops_.front(), stops_.back());
    {
        const QSignalBlocker block(spin_);
        spin_->setValue(static_cast<int>(value_));
    }
    syncSlider();
}

void LogSlider::setValue(std::int64_t value) {
    const std::int64_t clamped = std::clamp<std::int64_t>(value, stops_.front(), stops_.back());
    if (clamped == value_) return;
    setValueSilently(clamped);
    emit valueChanged(value_);
}

}  // namespace quantplan::ui
