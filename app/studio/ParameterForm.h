#pragma once
// A plugin's parameters as a form, built from the schema in its manifest (core/plugin/ParameterSchema.h),
// as Slicer builds CLI-module panels from their XML: integer with a range -> spin box, number ->
// double spin box, boolean -> check box, choice -> combo box, file / folder -> path field with a
// browse button, string and lists -> line edit (lists comma separated). Each editor is named
// "parameter:<name>" and shows the parameter's help as its tooltip; advanced parameters sit under a
// "More" toggle. The form gives back `name=value` text for the values changed from their defaults,
// which is what `medseg infer --set` / `medseg train --set` take.
#include <QStringList>
#include <QWidget>
#include <map>

#include "core/plugin/ParameterSchema.h"

class QFormLayout;

namespace medseg::studio {

class ParameterForm : public QWidget {
  Q_OBJECT
 public:
  explicit ParameterForm(QWidget* parent = nullptr);
  // Replaces the editors with those of `schema`, each at its default.
  void setSchema(const plugin::ParameterSchema& schema);
  const plugin::ParameterSchema& schema() const { return schema_; }
  // The editor of one parameter (nullptr when the schema has none of that name).
  QWidget* editor(const QString& name) const;
  // name=value for every parameter whose editor differs from its default (empty ones left out).
  QStringList assignments() const;

 private:
  QString valueText(const plugin::ParameterSpec& spec, QWidget* editor) const;
  plugin::ParameterSchema schema_;
  QFormLayout* form_;
  QFormLayout* advanced_;
  QWidget* advancedBox_;
  std::map<std::string, QWidget*> editors_;
};

}  // namespace medseg::studio
