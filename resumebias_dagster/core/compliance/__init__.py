"""What regulators ask an audit to publish: New York City Local Law 144's bias-audit tables
(``ll144``, over ``individuals``) and, built on them, the published summary and the EU AI Act
test record."""
