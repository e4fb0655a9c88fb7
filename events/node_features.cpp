#include "events/node_features.hpp"

#include <algorithm>
#include <cctype>

namespace cairn {
namespace {

// expr := term ('|' term)* ; term := factor (('&'|',') factor)* ; factor := name | '(' expr ')' | '[' expr ']'
class FeatureParser {
 public:
  FeatureParser(std::string_view text, const std::vector<std::string>* features) : text_(text), features_(features) {}

  std::optional<bool> parse() {
    auto value = expression();
    skip_blanks();
    if (!value || pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  std::optional<bool> expression() {
    auto value = term();
    if (!value) return std::nullopt;
    while (peek() == '|') {
      ++pos_;
      auto next = term();
      if (!next) return std::nullopt;
      value = *value || *next;
    }
    return value;
  }

  std::optional<bool> term() {
    auto value = factor();
    if (!value) return std::nullopt;
    while (peek() == '&' || peek() == ',') {
      ++pos_;
      auto next = factor();
      if (!next) return std::nullopt;
      value = *value && *next;
    }
    return value;
  }

  std::optional<bool> factor() {
    char c = peek();
    if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      ++pos_;
      auto value = expression();
      if (!value || peek() != close) return std::nullopt;
      ++pos_;
      return value;
    }
    size_t start = pos_;
    while (pos_ < text_.size() && name_char(text_[pos_])) ++pos_;
    if (pos_ == start) return std::nullopt;
    std::string_view name = text_.substr(start, pos_ - start);
    if (!features_) return true;
    return std::find(features_->begin(), features_->end(), name) != features_->end();
  }

  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  }

  void skip_blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  char peek() {
    skip_blanks();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  std::string_view text_;
  const std::vector<std::string>* features_;
  size_t pos_ = 0;
};

}  // namespace

bool valid_feature_expression(std::string_view expression) {
  return FeatureParser(expression, nullptr).parse().has_value();
}

bool features_satisfy(std::string_view expression, const std::vector<std::string>& features) {
  if (expression.empty()) return true;
  return FeatureParser(expression, &features).parse().value_or(false);
}

}  // namespace cairn
