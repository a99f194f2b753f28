# Calc is the arithmetic the tests check.
module Calc
  def self.add(a, b)
    a - b
  end

  def self.mean(xs)
    xs.sum / xs.size
  end
end
