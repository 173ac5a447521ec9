// IndexSet: a fixed-size set of dataflow-graph indices, stored as a bitset.
//
// The partitioner and the search manipulate sets of nodes constantly: the
// inside of a sub-graph, the nodes downstream of a node, the nodes a search
// state has covered. A bitset of 64-bit words makes union, intersection and
// subset tests a few word operations, and makes sets cheap to hash and to
// order, so they can key the search's state table and break its ties
// deterministically. Every set of one DataflowGraph has that graph's size;
// binary operations assert that sizes agree.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace collage {

// The position of a node in a DataflowGraph's post-DFS (topological) order.
using PostDfsIndex = std::size_t;

class IndexSet {
 public:
  IndexSet() = default;
  // The empty set over indices [0, size).
  explicit IndexSet(std::size_t size);
  // The set over [0, size) holding `indices`.
  IndexSet(std::size_t size, std::initializer_list<PostDfsIndex> indices);
  IndexSet(std::size_t size, const std::vector<PostDfsIndex>& indices);
  // Every index of [0, size).
  static IndexSet all(std::size_t size);

  // The universe size, not the number of members (see popcount()).
  std::size_t size() const { return size_; }
  bool empty() const;
  std::size_t popcount() const;

  bool contains(PostDfsIndex index) const;
  bool operator[](PostDfsIndex index) const { return contains(index); }
  void add(PostDfsIndex index);
  void remove(PostDfsIndex index);

  IndexSet operator|(const IndexSet& other) const;
  IndexSet operator&(const IndexSet& other) const;
  // Members of this set that are not in `other`.
  IndexSet operator-(const IndexSet& other) const;
  IndexSet& operator|=(const IndexSet& other);
  IndexSet& operator&=(const IndexSet& other);
  IndexSet& operator-=(const IndexSet& other);

  bool intersects(const IndexSet& other) const;
  // Whether every member of this set is in `other`.
  bool is_subset(const IndexSet& other) const;
  bool is_strict_subset(const IndexSet& other) const;

  // The smallest index >= `start` that is not a member, or nullopt when
  // every index from `start` on is a member.
  std::optional<PostDfsIndex> first_outside(PostDfsIndex start = 0) const;
  // The smallest member >= `start`, or nullopt.
  std::optional<PostDfsIndex> first_inside(PostDfsIndex start = 0) const;
  // The largest member, or nullopt for the empty set.
  std::optional<PostDfsIndex> last_inside() const;

  std::vector<PostDfsIndex> to_vector() const;
  // "{1,3,5}"
  std::string to_string() const;
  std::size_t hash() const;

  friend bool operator==(const IndexSet& a, const IndexSet& b) = default;
  // A total order for deterministic tie breaks, not inclusion: the
  // characteristic vectors are compared from index 0 up, and the set holding
  // the smallest index where they differ orders first.
  friend std::strong_ordering operator<=>(const IndexSet& a, const IndexSet& b);

  // Iterates over the members in increasing order.
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = PostDfsIndex;
    using difference_type = std::ptrdiff_t;
    using pointer = const PostDfsIndex*;
    using reference = PostDfsIndex;

    Iterator(const IndexSet* set, std::size_t position) : set_(set), position_(position) {}
    PostDfsIndex operator*() const { return position_; }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) {
      return a.position_ == b.position_;
    }

   private:
    const IndexSet* set_;
    std::size_t position_;
  };
  Iterator begin() const;
  Iterator end() const { return Iterator(this, size_); }

 private:
  static constexpr std::size_t kBits = 64;
  static std::size_t word_count(std::size_t size) { return (size + kBits - 1) / kBits; }

  std::size_t size_ = 0;
  std::vector<std::uint64_t> words_;
};

}  // namespace collage

template <>
struct std::hash<collage::IndexSet> {
  std::size_t operator()(const collage::IndexSet& set) const { return set.hash(); }
};
