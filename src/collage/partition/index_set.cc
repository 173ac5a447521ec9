#include "collage/partition/index_set.h"

#include <bit>
#include <cassert>

namespace collage {

IndexSet::IndexSet(std::size_t size) : size_(size), words_(word_count(size), 0) {}

IndexSet::IndexSet(std::size_t size, std::initializer_list<PostDfsIndex> indices) : IndexSet(size) {
  for (PostDfsIndex index : indices) add(index);
}

IndexSet::IndexSet(std::size_t size, const std::vector<PostDfsIndex>& indices) : IndexSet(size) {
  for (PostDfsIndex index : indices) add(index);
}

IndexSet IndexSet::all(std::size_t size) {
  IndexSet set(size);
  for (std::uint64_t& word : set.words_) word = ~std::uint64_t{0};
  // Keep the bits past `size` clear so that equality and hashing see only members.
  if (std::size_t tail = size % kBits; tail != 0) {
    set.words_.back() = (std::uint64_t{1} << tail) - 1;
  }
  return set;
}

bool IndexSet::empty() const {
  for (std::uint64_t word : words_) {
    if (word != 0) return false;
  }
  return true;
}

std::size_t IndexSet::popcount() const {
  std::size_t count = 0;
  for (std::uint64_t word : words_) count += static_cast<std::size_t>(std::popcount(word));
  return count;
}

bool IndexSet::contains(PostDfsIndex index) const {
  assert(index < size_ && "IndexSet: index out of range");
  return (words_[index / kBits] >> (index % kBits)) & 1U;
}

void IndexSet::add(PostDfsIndex index) {
  assert(index < size_ && "IndexSet: index out of range");
  words_[index / kBits] |= std::uint64_t{1} << (index % kBits);
}

void IndexSet::remove(PostDfsIndex index) {
  assert(index < size_ && "IndexSet: index out of range");
  words_[index / kBits] &= ~(std::uint64_t{1} << (index % kBits));
}

IndexSet IndexSet::operator|(const IndexSet& other) const {
  IndexSet result = *this;
  result |= other;
  return result;
}

IndexSet IndexSet::operator&(const IndexSet& other) const {
  IndexSet result = *this;
  result &= other;
  return result;
}

IndexSet IndexSet::operator-(const IndexSet& other) const {
  IndexSet result = *this;
  result -= other;
  return result;
}

IndexSet& IndexSet::operator|=(const IndexSet& other) {
  assert(size_ == other.size_ && "IndexSet: sets of different sizes");
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
  return *this;
}

IndexSet& IndexSet::operator&=(const IndexSet& other) {
  assert(size_ == other.size_ && "IndexSet: sets of different sizes");
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
  return *this;
}

IndexSet& IndexSet::operator-=(const IndexSet& other) {
  assert(size_ == other.size_ && "IndexSet: sets of different sizes");
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= ~other.words_[i];
  return *this;
}

bool IndexSet::intersects(const IndexSet& other) const {
  assert(size_ == other.size_ && "IndexSet: sets of different sizes");
  for (std::size_t i = 0; i < words_.size(); ++i) {
    if ((words_[i] & other.words_[i]) != 0) return true;
  }
  return false;
}

bool IndexSet::is_subset(const IndexSet& other) const {
  assert(size_ == other.size_ && "IndexSet: sets of different sizes");
  for (std::size_t i = 0; i < words_.size(); ++i) {
    if ((words_[i] & ~other.words_[i]) != 0) return false;
  }
  return true;
}

bool IndexSet::is_strict_subset(const IndexSet& other) const {
  return is_subset(other) && *this != other;
}

std::optional<PostDfsIndex> IndexSet::first_outside(PostDfsIndex start) const {
  for (std::size_t w = start / kBits; w < words_.size(); ++w) {
    std::uint64_t missing = ~words_[w];
    if (w == start / kBits) missing &= ~std::uint64_t{0} << (start % kBits);
    if (missing == 0) continue;
    PostDfsIndex index = w * kBits + static_cast<std::size_t>(std::countr_zero(missing));
    if (index >= size_) return std::nullopt;
    return index;
  }
  return std::nullopt;
}

std::optional<PostDfsIndex> IndexSet::first_inside(PostDfsIndex start) const {
  for (std::size_t w = start / kBits; w < words_.size(); ++w) {
    std::uint64_t present = words_[w];
    if (w == start / kBits) present &= ~std::uint64_t{0} << (start % kBits);
    if (present == 0) continue;
    return w * kBits + static_cast<std::size_t>(std::countr_zero(present));
  }
  return std::nullopt;
}

std::optional<PostDfsIndex> IndexSet::last_inside() const {
  for (std::size_t w = words_.size(); w-- > 0;) {
    if (words_[w] == 0) continue;
    return w * kBits + (kBits - 1 - static_cast<std::size_t>(std::countl_zero(words_[w])));
  }
  return std::nullopt;
}

std::vector<PostDfsIndex> IndexSet::to_vector() const {
  std::vector<PostDfsIndex> members;
  members.reserve(popcount());
  for (PostDfsIndex index : *this) members.push_back(index);
  return members;
}

std::string IndexSet::to_string() const {
  std::string text = "{";
  bool first = true;
  for (PostDfsIndex index : *this) {
    if (!first) text += ",";
    text += std::to_string(index);
    first = false;
  }
  return text + "}";
}

std::size_t IndexSet::hash() const {
  // FNV-1a over the words, then the size: cheap and well spread for bitsets.
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::uint64_t value) {
    h ^= value;
    h *= 1099511628211ULL;
  };
  for (std::uint64_t word : words_) {
    mix(word);
    mix(word >> 32);
  }
  mix(size_);
  return static_cast<std::size_t>(h);
}

std::strong_ordering operator<=>(const IndexSet& a, const IndexSet& b) {
  if (a.size_ != b.size_) return a.size_ <=> b.size_;
  for (std::size_t w = 0; w < a.words_.size(); ++w) {
    std::uint64_t differ = a.words_[w] ^ b.words_[w];
    if (differ == 0) continue;
    std::uint64_t lowest = differ & (~differ + 1);
    return (a.words_[w] & lowest) != 0 ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  return std::strong_ordering::equal;
}

IndexSet::Iterator IndexSet::begin() const {
  return Iterator(this, first_inside(0).value_or(size_));
}

IndexSet::Iterator& IndexSet::Iterator::operator++() {
  position_ = set_->first_inside(position_ + 1).value_or(set_->size_);
  return *this;
}

}  // namespace collage
