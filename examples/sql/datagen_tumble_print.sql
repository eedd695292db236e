-- A bounded datagen source of orders, counted and summed per product in 10-second
-- tumbling event-time windows, printed as Flink's print connector does.
CREATE TABLE orders (
  order_id BIGINT,
  product INT,
  amount INT,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '1000',
  'fields.order_id.kind' = 'sequence',
  'fields.order_id.start' = '1',
  'fields.order_id.end' = '1000',
  'fields.product.min' = '1',
  'fields.product.max' = '3',
  'fields.amount.min' = '1',
  'fields.amount.max' = '100'
);

CREATE TABLE product_totals (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  product INT,
  orders BIGINT,
  total BIGINT
) WITH ('connector' = 'print');

INSERT INTO product_totals
SELECT window_start, window_end, product, COUNT(*) AS orders, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '10' SECONDS))
GROUP BY window_start, window_end, product;
