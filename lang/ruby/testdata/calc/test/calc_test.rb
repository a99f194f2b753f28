require "minitest/autorun"
require "calc"

class CalcTest < Minitest::Test
  def test_add
    assert_equal 3, Calc.add(1, 2)
  end

  def test_mean
    assert_equal 2, Calc.mean([1, 2, 3])
  end

  def test_mean_of_nothing
    assert_raises(ZeroDivisionError) { Calc.mean([]) }
  end
end
