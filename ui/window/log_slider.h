#pragma once
// A slider on a log2 scale with a spin box for typed entry: batch 1 to 4,096 and context 128 to
// 131,072 span 12 and 10 octaves, which a linear slider cannot reach with any precision.
#include <cstdint>
#include <vector>

#include <QtWidgets/QWidget>

QT_BEGIN_NAMESPACE
class QSlider;
class QSpinBox;
QT_END_NAMESPACE

namespace quantplan::ui {

// Slider positions per octave: 4 gives 1, 1.19, 1.41, 1.68, 2, ... (rounded to integers).
inline constexpr int kLogSliderStepsPerOctave = 4;

// The integer values a log slider stops at between `lo` and `hi`: every power of two and
// kLogSliderStepsPerOctave steps per octave between, rounded, without duplicates, ascending.
std::vector<std::int64_t> log_slider_values(std::int64_t lo, std::int64_t hi);

// A log-scale slider plus a spin box. The spin box accepts any integer in range; the slider then
// sits at the nearest stop. valueChanged fires once per change, from either.
class LogSlider : public QWidget {
    Q_OBJECT
public:
    LogSlider(std::int64_t lo, std::int64_t hi, QWidget* parent = nullptr);

    std::int64_t value() const { return value_; }
    // Sets the value (clamped to the range) without emitting valueChanged.
    void setValueSilently(std::int64_t value);

    QSlider* slider() const { return slider_; }
    QSpinBox* spinBox() const { return spin_; }

public slots:
    // Sets the value (clamped) and emits valueChanged when it changed.
    void setValue(std::int64_t value);

signals:
    void valueChanged(std::int64_t value);

private:
    void syncSlider();
    std::vector<std::int64_t> stops_;
    std::int64_t value_ = 0;
    QSlider* slider_ = nullptr;
    QSpinBox* spin_ = nullptr;
};

}  // namespace quantplan::ui
