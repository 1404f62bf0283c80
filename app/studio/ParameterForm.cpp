#include "app/studio/ParameterForm.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <limits>

#include "app/studio/PanelWidgets.h"

namespace medseg::studio {
namespace {

using plugin::ParameterSpec;
using plugin::ParameterType;

QString listText(const nlohmann::json& value) {
  if (!value.is_array()) return {};
  QStringList items;
  for (const auto& item : value) items << (item.is_string() ? QString::fromStdString(item.get<std::string>()) : QString::fromStdString(item.dump()));
  return items.join(",");
}

QString defaultText(const ParameterSpec& spec) {
  const auto& d = spec.defaultValue;
  if (d.is_null()) return {};
  if (d.is_string()) return QString::fromStdString(d.get<std::string>());
  if (d.is_array()) return listText(d);
  return QString::fromStdString(d.dump());
}

QWidget* makeEditor(const ParameterSpec& spec, QWidget* parent) {
  const auto& d = spec.defaultValue;
  switch (spec.type) {
    case ParameterType::Integer: {
      auto* box = new QSpinBox(parent);
      box->setRange(spec.minimum ? static_cast<int>(*spec.minimum) : std::numeric_limits<int>::min(),
                    spec.maximum ? static_cast<int>(std::min<double>(*spec.maximum, std::numeric_limits<int>::max()))
                                 : std::numeric_limits<int>::max());
      if (d.is_number()) box->setValue(d.get<int>());
      if (!spec.unit.empty()) box->setSuffix(" " + QString::fromStdString(spec.unit));
      return box;
    }
    case ParameterType::Number: {
      auto* box = new QDoubleSpinBox(parent);
      box->setDecimals(4);
      box->setRange(spec.minimum.value_or(-1e9), spec.maximum.value_or(1e9));
      box->setSingleStep(spec.maximum && spec.minimum ? (*spec.maximum - *spec.minimum) / 20 : 1.0);
      if (d.is_number()) box->setValue(d.get<double>());
      if (!spec.unit.empty()) box->setSuffix(" " + QString::fromStdString(spec.unit));
      return box;
    }
    case ParameterType::Boolean: {
      auto* box = new QCheckBox(parent);
      box->setChecked(d.is_boolean() && d.get<bool>());
      return box;
    }
    case ParameterType::Choice: {
      auto* box = new QComboBox(parent);
      for (const auto& choice : spec.choices) box->addItem(QString::fromStdString(choice));
      if (d.is_string()) box->setCurrentText(QString::fromStdString(d.get<std::string>()));
      return box;
    }
    default: {
      auto* edit = new QLineEdit(defaultText(spec), parent);
      if (d.is_null()) edit->setPlaceholderText(QObject::tr("(plugin's choice)"));
      return edit;
    }
  }
}

}  // namespace

ParameterForm::ParameterForm(QWidget* parent)
    : QWidget(parent), form_(new QFormLayout), advanced_(new QFormLayout), advancedBox_(new QWidget(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(form_);
  auto* more = new QToolButton(this);
  more->setObjectName("parametersMore");
  more->setText(tr("More settings"));
  more->setCheckable(true);
  more->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  more->setArrowType(Qt::RightArrow);
  layout->addWidget(more);
  advancedBox_->setLayout(advanced_);
  advanced_->setContentsMargins(0, 0, 0, 0);
  advancedBox_->setVisible(false);
  layout->addWidget(advancedBox_);
  connect(more, &QToolButton::toggled, this, [this, more](bool on) {
    advancedBox_->setVisible(on);
    more->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
  });
}

void ParameterForm::setSchema(const plugin::ParameterSchema& schema) {
  for (QFormLayout* layout : {form_, advanced_})
    while (layout->rowCount() > 0) layout->removeRow(0);
  editors_.clear();
  schema_ = schema;
  for (const auto& spec : schema_.specs()) {
    QWidget* editor = makeEditor(spec, this);
    editor->setObjectName("parameter:" + QString::fromStdString(spec.name));
    editor->setToolTip(QString::fromStdString(spec.help));
    QWidget* row = editor;
    if (spec.type == ParameterType::File || spec.type == ParameterType::Folder)
      row = withBrowseButton(static_cast<QLineEdit*>(editor), spec.type == ParameterType::Folder,
                             spec.filter.empty() ? tr("All files (*)") : QString::fromStdString(spec.filter), this);
    const QString label = QString::fromStdString(spec.label.empty() ? spec.name : spec.label);
    (spec.advanced ? advanced_ : form_)->addRow(label, row);
    editors_[spec.name] = editor;
  }
  findChild<QToolButton*>("parametersMore")->setVisible(advanced_->rowCount() > 0);
}

QWidget* ParameterForm::editor(const QString& name) const {
  const auto found = editors_.find(name.toStdString());
  return found == editors_.end() ? nullptr : found->second;
}

QString ParameterForm::valueText(const ParameterSpec& spec, QWidget* editor) const {
  if (auto* box = qobject_cast<QSpinBox*>(editor)) return QString::number(box->value());
  if (auto* box = qobject_cast<QDoubleSpinBox*>(editor)) return QString::number(box->value(), 'g', 10);
  if (auto* box = qobject_cast<QCheckBox*>(editor)) return box->isChecked() ? "true" : "false";
  if (auto* box = qobject_cast<QComboBox*>(editor)) return box->currentText();
  if (auto* edit = qobject_cast<QLineEdit*>(editor)) return edit->text().trimmed();
  (void)spec;
  return {};
}

QStringList ParameterForm::assignments() const {
  QStringList out;
  for (const auto& spec : schema_.specs()) {
    const QString value = valueText(spec, editors_.at(spec.name));
    const bool isDefault = spec.type == ParameterType::Number && spec.defaultValue.is_number()
                               ? std::abs(value.toDouble() - spec.defaultValue.get<double>()) < 1e-12
                               : value == defaultText(spec);
    if (isDefault || value.isEmpty()) continue;
    out << QString::fromStdString(spec.name) + "=" + value;
  }
  return out;
}

}  // namespace medseg::studio
