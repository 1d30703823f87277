//! Go's unstable sort, reproduced: where Karpenter sorts a slice built in a fixed order with a
//! comparator that has ties, the order of the tied elements is a fixed function of the input,
//! and `sort.Slice`, `sort.Sort` and `slices.SortFunc` all compute it with the same
//! pattern-defeating quicksort (Go's `sort/gen_sort_variants.go` generates `zsortfunc.go`,
//! `zsortinterface.go` and `slices/zsortanyfunc.go` from one template; `slices.SortFunc`'s
//! `less` is `cmp(a, b) < 0`). Up to 12 elements it is an insertion sort (stable); beyond, a
//! pdqsort whose "random" pattern breaking is an xorshift seeded from the length — no true
//! randomness, so the result is reproducible. Written from the algorithm's description and
//! checked against Go's own output (`tests/fixtures/go-sort/`).

/// Below this many elements, insertion sort (Go's `maxInsertion`).
const MAX_INSERTION: usize = 12;
/// From this length the pivot is Tukey's ninther rather than a median of three.
const SHORTEST_NINTHER: usize = 50;
/// Pivot-choice swaps that mean "the range looks decreasing" (4 medians × 3 comparisons).
const MAX_SWAPS: usize = 12;
/// `partialInsertionSort`: at most this many out-of-order pairs are mended …
const MAX_STEPS: usize = 5;
/// … and only on ranges at least this long.
const SHORTEST_SHIFTING: usize = 50;

/// What the pivot sampling suggests about the range's order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SortedHint {
    Unknown,
    Increasing,
    Decreasing,
}

/// Sorts `data` exactly as Go's `sort.Slice(data, less)` (also `sort.Sort` and
/// `slices.SortFunc` with `less = cmp < 0`) would, ties included.
pub fn sort_slice<T>(data: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    let n = data.len();
    // Go: `limit := bits.Len(uint(length))`.
    let limit = (usize::BITS - n.leading_zeros()) as usize;
    Sorter {
        data,
        less: &mut less,
    }
    .pdqsort(0, n, limit);
}

/// Whether Go's sort would leave `data` as it is: exactly when it is already non-decreasing
/// under `less` (no pivot sample swaps, and the partial insertion sort finds no inversion).
pub fn is_sorted_by<T>(data: &[T], mut less: impl FnMut(&T, &T) -> bool) -> bool {
    data.windows(2).all(|w| !less(&w[1], &w[0]))
}

/// Go's sort of a slice that was sorted before the one element at `changed` changed: the same
/// result as [`sort_slice`], found without walking the sorted rest where Go's own steps provably
/// only move that element to where a stable insertion puts it. Up to 12 elements that is the
/// insertion sort. From 50, when the pivot sampling sees the slice as increasing, pdqsort's
/// first step is the partial insertion sort, which swaps the element with its out-of-order
/// neighbour, shifts it on past every element it is out of order with, finds the rest in order
/// and stops. Otherwise (13 to 49 elements, or a sample that saw the change) the full sort runs.
pub fn resort_changed<T>(data: &mut [T], changed: usize, mut less: impl FnMut(&T, &T) -> bool) {
    let n = data.len();
    let insertion_only = n <= MAX_INSERTION
        || (n >= SHORTEST_SHIFTING
            && Sorter {
                data: &mut *data,
                less: &mut less,
            }
            .choose_pivot(0, n)
            .1 == SortedHint::Increasing);
    if !insertion_only {
        sort_slice(data, less);
        return;
    }
    if changed + 1 < n && less(&data[changed + 1], &data[changed]) {
        // It grew: it goes before the first later element not below it.
        let rest = &data[changed + 1..];
        let to = changed + 1 + rest.partition_point(|x| less(x, &data[changed]));
        data[changed..to].rotate_left(1);
    } else if changed > 0 && less(&data[changed], &data[changed - 1]) {
        // It shrank: it goes after the last earlier element not above it.
        let to = data[..changed].partition_point(|x| !less(&data[changed], x));
        data[to..=changed].rotate_right(1);
    }
}

struct Sorter<'a, T, F: FnMut(&T, &T) -> bool> {
    data: &'a mut [T],
    less: &'a mut F,
}

impl<T, F: FnMut(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&mut self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    /// Restores the max-heap property below `root` in the heap `data[first..first + hi]`.
    fn sift_down(&mut self, mut root: usize, hi: usize, first: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let hi = b - a;
        for i in (0..=(hi.saturating_sub(1)) / 2).rev() {
            self.sift_down(i, hi, a);
        }
        for i in (0..hi).rev() {
            self.swap(a, a + i);
            self.sift_down(0, i, a);
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: usize) {
        let mut was_balanced = true;
        let mut was_partitioned = true;
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == SortedHint::Decreasing {
                self.reverse_range(a, b);
                // The pivot keeps its distance from the other end.
                pivot = (b - 1) - (pivot - a);
                hint = SortedHint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == SortedHint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            // The element before the range is ≥ every element in it: many duplicates of the pivot.
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already_partitioned) = self.partition(a, b, pivot);
            was_partitioned = already_partitioned;
            let (left, right) = (mid - a, b - mid);
            let balance_threshold = length / 8;
            if left < right {
                was_balanced = left >= balance_threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= balance_threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    /// One quicksort partition around `data[pivot]`: smaller elements before the returned
    /// index, the others after it; also whether no element had to move.
    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        // `i` and `j` bound (inclusively) what is left to partition; `j` may reach `a`.
        let (mut i, mut j) = (a + 1, b - 1);
        while i <= j && self.less(i, a) {
            i += 1;
        }
        while i <= j && !self.less(j, a) {
            j -= 1;
        }
        if i > j {
            self.swap(j, a);
            return (j, true);
        }
        self.swap(i, j);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i, a) {
                i += 1;
            }
            while i <= j && !self.less(j, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
        self.swap(j, a);
        (j, false)
    }

    /// Splits a range with nothing below the pivot into "equal to it" then "greater"; returns
    /// where the greater ones start.
    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a + 1, b - 1);
        loop {
            while i <= j && !self.less(a, i) {
                i += 1;
            }
            while i <= j && self.less(a, j) {
                j -= 1;
            }
            if i > j {
                return i;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }

    /// Mends up to a few inversions of a nearly sorted range; whether it ended sorted.
    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            // The smaller one moves left — down to index 1 of the whole slice, as Go's loop does.
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 && self.less(j, j - 1) {
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            // The greater one moves right.
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b && self.less(j, j - 1) {
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    /// Swaps three middle elements with pseudo-random others (xorshift seeded by the length).
    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length < 8 {
            return;
        }
        let mut random = length as u64;
        // Go's `nextPowerOfTwo`: 1 << bits.Len(length), so strictly above the length.
        let modulus = 1usize << (usize::BITS - length.leading_zeros());
        let middle = a + (length / 4) * 2;
        for idx in middle - 1..=middle + 1 {
            random ^= random << 13;
            random ^= random >> 17;
            random ^= random << 5;
            let mut other = (random as usize) & (modulus - 1);
            if other >= length {
                other -= length;
            }
            self.swap(idx, a + other);
        }
    }

    /// The pivot index (median of three, or Tukey's ninther from 50 elements) and what the
    /// comparisons suggest about the range's order. Only indices move, never elements.
    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, SortedHint) {
        let l = b - a;
        let mut swaps = 0;
        let mut i = a + l / 4;
        let mut j = a + l / 4 * 2;
        let mut k = a + l / 4 * 3;
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median(i - 1, i, i + 1, &mut swaps);
                j = self.median(j - 1, j, j + 1, &mut swaps);
                k = self.median(k - 1, k, k + 1, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        let hint = match swaps {
            0 => SortedHint::Increasing,
            MAX_SWAPS => SortedHint::Decreasing,
            _ => SortedHint::Unknown,
        };
        (j, hint)
    }

    /// The index of the median of three, counting the comparisons that found them reversed.
    fn median(&mut self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, _) = self.order2(b, c, swaps);
        self.order2(a, b, swaps).1
    }

    fn order2(&mut self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn reverse_range(&mut self, a: usize, b: usize) {
        self.data[a..b].reverse();
    }
}

#[cfg(test)]
mod tests;
